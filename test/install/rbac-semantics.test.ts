/**
 * What the real API server's RBAC does with `resourceNames`, the facts the shipped manifests rely on
 * (issue 26, item 9). Each identity is a ServiceAccount bound to one Role and used through its
 * TokenRequest token:
 * - server-side apply of an object that does not exist yet is a PATCH that creates: it needs
 *   `patch` AND `create`, and both may be restricted by name (the create-on-patch check carries it);
 * - a plain POST create carries no name, so a name-restricted `create` never allows it;
 * - list and watch with `fieldSelector=metadata.name=<name>` are authorized against resourceNames,
 *   without the selector they are not.
 */
import type { KubeConfig, V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../pkg/kube/client/index.ts';
import type { Client } from '../../pkg/kube/client/types.ts';
import { KubeError } from '../../pkg/kube/errors.ts';
import { CoreKinds, type KindRef, Scheme } from '../../pkg/kube/kinds.ts';
import { rawRequest } from '../../pkg/kube/raw.ts';
import { createNamespace } from '../support/kube.ts';
import { mustKubectl, removeTokenKubeconfigs, tokenKubeconfig } from './support.ts';

const CM = CoreKinds.ConfigMap as KindRef<V1ConfigMap>;
const NAME = 'named-map';
let ns: string;

/** A ServiceAccount bound to a Role of `rules` in `ns`, as a client with its token. */
async function identity(sa: string, rules: object[]): Promise<{ client: Client; kc: KubeConfig }> {
  const meta = { name: sa, namespace: ns };
  const rbac = 'rbac.authorization.k8s.io';
  const items = [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta },
    { apiVersion: `${rbac}/v1`, kind: 'Role', metadata: meta, rules },
    {
      apiVersion: `${rbac}/v1`,
      kind: 'RoleBinding',
      metadata: meta,
      roleRef: { apiGroup: rbac, kind: 'Role', name: sa },
      subjects: [{ kind: 'ServiceAccount', name: sa, namespace: ns }],
    },
  ];
  await mustKubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
  const { kc } = await tokenKubeconfig(sa, ns);
  return { client: createClient({ kc, scheme: new Scheme() }), kc };
}

const named = (verbs: string[]) => ({
  apiGroups: [''],
  resources: ['configmaps'],
  resourceNames: [NAME],
  verbs,
});
const map = (name = NAME) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns },
  data: { k: 'v' },
});
const apply = (c: Client, name = NAME) => c.apply(CM, map(name), { fieldManager: 'rbac-semantics' });
/** The HTTP status of a call: 2xx as 200, a refusal as its code. */
const status = (p: Promise<unknown>) =>
  p.then(
    () => 200,
    (e: unknown) => {
      if (e instanceof KubeError) return e.code;
      throw e;
    },
  );
const remove = () => mustKubectl(['delete', 'configmap', NAME, '-n', ns, '--ignore-not-found']);

beforeAll(async () => {
  ns = await createNamespace('rbac-semantics');
});
afterAll(() => removeTokenKubeconfigs());

describe('server-side apply under name-restricted rules', () => {
  it('cannot create with `patch` alone, and patches an existing object with it', async () => {
    const { client: c } = await identity('patch-only', [named(['patch'])]);
    await remove();
    const refused = await apply(c).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(KubeError);
    expect((refused as KubeError).code).toBe(403);
    expect((refused as KubeError).message).toMatch(/cannot create resource "configmaps"/);
    await mustKubectl(['create', 'configmap', NAME, '-n', ns]);
    expect(await status(apply(c))).toBe(200);
  });

  it('creates with `patch` + `create` restricted to the name, and nothing else', async () => {
    const { client: c } = await identity('patch-create', [named(['patch', 'create'])]);
    await remove();
    expect(await status(apply(c))).toBe(200);
    expect(await status(apply(c))).toBe(200);
    expect(await status(apply(c, 'other-map'))).toBe(403);
    // POST carries no name in the request: a name-restricted create never matches it.
    await remove();
    expect(await status(c.create(CM, map()))).toBe(403);
    expect(
      await status(c.patch(CM, { namespace: ns, name: 'other-map' }, { type: 'merge', patch: {} })),
    ).toBe(403);
  });

  it('lists and watches by name only with the metadata.name field selector', async () => {
    const { client: c, kc } = await identity('list-named', [named(['list', 'watch'])]);
    expect(await status(c.list(CM, { namespace: ns, fieldSelector: `metadata.name=${NAME}` }))).toBe(200);
    expect(await status(c.list(CM, { namespace: ns }))).toBe(403);
    expect(await status(c.list(CM, { namespace: ns, fieldSelector: 'metadata.name=other-map' }))).toBe(403);
    // A watch (what an informer keeps open), ended by the server after a second.
    const watch = (selector: string) =>
      rawRequest(kc, {
        path: `/api/v1/namespaces/${ns}/configmaps?watch=1&timeoutSeconds=1${selector}`,
      }).then((r) => r.status);
    expect(await watch(`&fieldSelector=metadata.name%3D${NAME}`)).toBe(200);
    expect(await watch('')).toBe(403);
  });
});
