/**
 * Least privilege of the single-tenant install (manifests/base), proven against the real API
 * server (issue 26, item 9). Its RBAC is rendered with kubectl kustomize into a fresh namespace
 * standing for berth-system and applied without the workloads; a real `berth api` runs with the
 * TokenRequest token of its ServiceAccount. Positive: the API works in its own namespace (real
 * requests, the marketplace map's creation included). Negative: the API's and the controller's
 * tokens, asked through SelfSubjectAccessReviews and used directly, may not write Secrets or
 * ConfigMaps in kube-system or any other namespace, nor any ConfigMap but `marketplace-sources`.
 * The impersonation component: least-privilege-impersonation.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { berthScheme } from '../../pkg/api/index.ts';
import { createClient } from '../../pkg/kube/client/index.ts';
import { KubeError } from '../../pkg/kube/errors.ts';
import { CoreKinds } from '../../pkg/kube/kinds.ts';
import { client } from '../gateway/support.ts';
import { createNamespace } from '../support/kube.ts';
import {
  type ApiProcess,
  answersOf,
  every,
  installRbacOf,
  mustKubectl,
  type RbacObject,
  scratchDir,
  startApi,
  stopAll,
  tokenKubeconfig,
} from './support.ts';

const scratch = scratchDir();
const OTHER_SECRET = 'other-namespace-value-never-written';
/** The install namespace (berth-system in a real install) and a namespace of someone else. */
let ns: string;
let other: string;
let suffix: string;
let rendered: RbacObject[];
let api: Awaited<ReturnType<typeof tokenKubeconfig>>;
let controller: Awaited<ReturnType<typeof tokenKubeconfig>>;
let open: ApiProcess;

beforeAll(async () => {
  [ns, other] = await Promise.all([createNamespace('berth-single'), createNamespace('berth-single-other')]);
  suffix = `-${ns.slice(-6)}`;
  rendered = await installRbacOf(scratch.dir, 'base', ns, suffix);
  const theirs = ['generic', 'theirs', '-n', other, `--from-literal=k=${OTHER_SECRET}`];
  await mustKubectl(['create', 'secret', ...theirs]);
  await mustKubectl(['create', 'configmap', 'theirs', '-n', other, '--from-literal=k=v']);
  await mustKubectl(['create', 'configmap', 'platform-settings', '-n', ns, '--from-literal=k=v']);
  [api, controller] = await Promise.all([
    tokenKubeconfig(`berth-api${suffix}`, ns),
    tokenKubeconfig(`berth-controller${suffix}`, ns),
  ]);
  open = await startApi(api.path, ns, 'open');
}, 300_000);

afterAll(async () => {
  await stopAll();
  scratch.remove();
});

describe('the rendered base', () => {
  it('grants the API no ClusterRole, and the controller no unnamed ConfigMap right', () => {
    const kinds = rendered.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(kinds).toContain(`Role/berth-api${suffix}`);
    expect(kinds).not.toContain(`ClusterRole/berth-api${suffix}`);
    const ctl = rendered.find(
      (o) => o.kind === 'ClusterRole' && o.metadata.name === `berth-controller${suffix}`,
    );
    const maps = ctl?.rules?.filter((r) => r.resources?.includes('configmaps')) ?? [];
    expect(maps).toHaveLength(1);
    expect(maps[0]?.resourceNames).toEqual(['marketplace-sources']);
  });
});

describe('the single-tenant API with its own token', () => {
  it('serves its namespace: resources, Secrets, API keys, generic reads, marketplace', async () => {
    const c = client(open.url);
    const base = `/v1/namespaces/${ns}`;
    for (const [plural, body] of [
      ['agents', { name: 'single-agent', spec: { prompt: 'a' } }],
      ['secrets', { name: 'single-secret', stringData: { apiKey: 'sk-single' } }],
    ] as const) {
      const made = await c.post(`${base}/${plural}`, body);
      expect(made.status, `POST ${plural}: ${made.text}`).toBe(201);
      expect((await c.get(`${base}/${plural}/${body.name}`)).status).toBe(200);
      const gone = await c.del(`${base}/${plural}/${body.name}`);
      expect(gone.status, `DELETE ${plural}: ${gone.text}`).toBeLessThan(300);
    }
    const key = await c.post('/v1/api-keys', { name: 'single-key' });
    expect(key.status, key.text).toBe(201);
    expect((await c.del(`/v1/api-keys/${key.body.public_key}`)).status).toBe(204);
    for (const path of [
      ...['pods', 'services', 'configmaps', 'secrets'].map((k) => `/v1/resources/api/v1/${k}`),
      '/v1/resources/apis/berth.dev/v1alpha1/queries',
      '/compat/v1/models',
    ]) {
      const r = await c.get(path);
      expect(r.status, `GET ${path}: ${r.text}`).toBe(200);
    }
    expect((await c.get('/v1/namespaces')).body.items).toEqual([{ name: ns }]);

    // Open mode: the API is the marketplace editor. The map does not exist yet: the API creates it
    // by server-side apply, which its name-restricted `create` allows.
    const sources = `/api/v1/namespaces/${ns}/marketplace-sources`;
    expect((await c.get(`${sources}/permissions`)).body).toEqual({ canEdit: true });
    const made = await c.post(sources, { name: 'hub', url: 'https://hub.example/items' });
    expect(made.status, made.text).toBe(201);
    expect((await c.patch(`${sources}/hub`, { displayName: 'Hub' })).status).toBe(200);
    expect((await c.get(sources)).body.items).toEqual([
      { name: 'hub', url: 'https://hub.example/items', displayName: 'Hub' },
    ]);
    expect((await c.del(`${sources}/hub`)).status).toBe(204);
    expect(open.proc.output()).not.toMatch(/forbidden/i);
  });

  it('refuses every other namespace, kube-system included, before the API server does', async () => {
    const c = client(open.url);
    for (const target of ['kube-system', other]) {
      for (const [method, path, body] of [
        ['POST', `/v1/namespaces/${target}/secrets`, { name: 'planted', stringData: { k: 'v' } }],
        ['PUT', `/v1/namespaces/${target}/secrets/theirs`, { stringData: { k: 'replaced' } }],
        ['DELETE', `/v1/namespaces/${target}/secrets/theirs`],
        [
          'POST',
          `/api/v1/namespaces/${target}/marketplace-sources`,
          { name: 'x', url: 'https://a.example/' },
        ],
        ['GET', `/v1/resources/api/v1/configmaps?namespace=${target}`],
      ] as Array<[string, string, unknown?]>) {
        const r = await c.call(method, path, body);
        expect(r.status, `${method} ${path}: ${r.text}`).toBe(403);
      }
    }
    expect((await c.post('/v1/namespaces', { name: `made-${ns.slice(-6)}` })).status).toBe(403);
  });

  it('may write Secrets and ConfigMaps nowhere else, and no ConfigMap but the marketplace map', async () => {
    const allowed = [
      `create secrets -n ${ns}`,
      `update secrets -n ${ns}`,
      `delete secrets -n ${ns}`,
      `list configmaps -n ${ns}`,
      `create configmaps/marketplace-sources -n ${ns}`,
      `patch configmaps/marketplace-sources -n ${ns}`,
      `create agents.berth.dev -n ${ns}`,
      `create localsubjectaccessreviews.authorization.k8s.io -n ${ns}`,
    ];
    const denied = [
      ...['kube-system', other].flatMap((target) => [
        ...['create', 'update', 'patch', 'delete', 'get', 'list'].map((v) => `${v} secrets -n ${target}`),
        ...['create', 'update', 'patch', 'delete'].map((v) => `${v} configmaps -n ${target}`),
        `patch configmaps/marketplace-sources -n ${target}`,
        `create agents.berth.dev -n ${target}`,
        `create localsubjectaccessreviews.authorization.k8s.io -n ${target}`,
      ]),
      'list secrets -A',
      'watch configmaps -A',
      // In its own namespace: no ConfigMap but the map, and no delete of the map either.
      `create configmaps -n ${ns}`,
      `patch configmaps/platform-settings -n ${ns}`,
      `update configmaps/platform-settings -n ${ns}`,
      `delete configmaps/platform-settings -n ${ns}`,
      `delete configmaps/marketplace-sources -n ${ns}`,
      `create pods -n ${ns}`,
      `create serviceaccounts --subresource=token -n ${ns}`,
      `create roles.rbac.authorization.k8s.io -n ${ns}`,
      `create rolebindings.rbac.authorization.k8s.io -n ${ns}`,
      // Nothing cluster-wide.
      'list namespaces',
      'create namespaces',
      'list customresourcedefinitions.apiextensions.k8s.io',
      'create subjectaccessreviews.authorization.k8s.io',
      'impersonate users',
      'impersonate groups/system:masters',
    ];
    expect(await answersOf(api.kc, allowed)).toEqual(every(allowed, true));
    expect(await answersOf(api.kc, denied)).toEqual(every(denied, false));
  });

  it('is refused by the API server itself when the token is used directly', async () => {
    const as = createClient({ kc: api.kc, scheme: berthScheme() });
    const refused = async (what: string, p: Promise<unknown>) => {
      const err = await p.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, what).toBeInstanceOf(KubeError);
      expect((err as KubeError).code, what).toBe(403);
    };
    const secret = (namespace: string) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'planted', namespace },
      stringData: { k: 'v' },
    });
    const map = (namespace: string, name: string) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace },
      data: { k: 'planted' },
    });
    await refused('create kube-system secret', as.create(CoreKinds.Secret, secret('kube-system')));
    await refused('create other secret', as.create(CoreKinds.Secret, secret(other)));
    await refused('read other secret', as.get(CoreKinds.Secret, { namespace: other, name: 'theirs' }));
    await refused('delete other secret', as.delete(CoreKinds.Secret, { namespace: other, name: 'theirs' }));
    await refused(
      'patch other map',
      as.patch(
        CoreKinds.ConfigMap,
        { namespace: other, name: 'theirs' },
        { type: 'merge', patch: { data: { k: 'x' } } },
      ),
    );
    await refused(
      'apply other marketplace map',
      as.apply(CoreKinds.ConfigMap, map(other, 'marketplace-sources'), { fieldManager: 't' }),
    );
    await refused('POST own map', as.create(CoreKinds.ConfigMap, map(ns, 'anything')));
    await refused(
      'apply own map of another name',
      as.apply(CoreKinds.ConfigMap, map(ns, 'anything'), { fieldManager: 't' }),
    );
    await refused(
      'patch own platform map',
      as.patch(
        CoreKinds.ConfigMap,
        { namespace: ns, name: 'platform-settings' },
        { type: 'merge', patch: { data: { k: 'x' } } },
      ),
    );
    const theirs = await mustKubectl(['get', 'secret', 'theirs', '-n', other, '-o', 'jsonpath={.data.k}']);
    expect(Buffer.from(theirs, 'base64').toString()).toBe(OTHER_SECRET);
  });
});

describe("the base's controller", () => {
  it('may list, watch, create and patch the marketplace map only, of all ConfigMaps', async () => {
    const allowed = [
      'watch configmaps/marketplace-sources -A',
      'list configmaps/marketplace-sources -A',
      `create configmaps/marketplace-sources -n ${other}`,
      `patch configmaps/marketplace-sources -n ${other}`,
    ];
    const denied = [
      'watch configmaps -A',
      'list configmaps -A',
      `get configmaps/theirs -n ${other}`,
      ...['patch', 'update', 'delete'].map((v) => `${v} configmaps/theirs -n ${other}`),
      `patch configmaps/kube-proxy -n kube-system`,
      `create configmaps -n ${other}`,
      `update configmaps/marketplace-sources -n ${other}`,
      `delete configmaps/marketplace-sources -n ${other}`,
      ...['create', 'update', 'patch', 'delete'].map((v) => `${v} secrets -n kube-system`),
    ];
    expect(await answersOf(controller.kc, allowed)).toEqual(every(allowed, true));
    expect(await answersOf(controller.kc, denied)).toEqual(every(denied, false));
  });
});
