/**
 * Least privilege of the single-tenant install (manifests/base) and of the impersonation component,
 * proven against the real API server (issue 26, item 9). The RBAC of manifests/base is rendered
 * with kubectl kustomize into a fresh namespace standing for berth-system and applied without the
 * workloads; real `berth api` processes run with TokenRequest tokens of its ServiceAccounts.
 * Positive: the API works in its own namespace (real requests, marketplace included). Negative:
 * the same tokens, asked through SelfSubjectAccessReviews and used directly, may not write Secrets
 * or ConfigMaps in kube-system or any other namespace, nor any ConfigMap but the marketplace map,
 * nor impersonate system:masters; the controller may patch no ConfigMap but `marketplace-sources`.
 */
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { berthScheme } from '../../pkg/api/index.ts';
import { createClient } from '../../pkg/kube/client/index.ts';
import { KubeError } from '../../pkg/kube/errors.ts';
import { CoreKinds } from '../../pkg/kube/kinds.ts';
import { type OidcFixture, startOidcProvider } from '../fixtures/oidc/provider.ts';
import { client } from '../gateway/support.ts';
import { createNamespace } from '../support/kube.ts';
import {
  type ApiProcess,
  applyRbacOf,
  canI,
  kustomization,
  MANIFESTS,
  mustKubectl,
  type RbacObject,
  scratchDir,
  startApi,
  stopAll,
  tokenKubeconfig,
} from './support.ts';

const scratch = scratchDir();
const AUD = 'https://berth.test/single';
const OTHER_SECRET = 'other-namespace-value-never-written';
/** The install namespace (berth-system in a real install) and a namespace of someone else. */
let ns: string;
let other: string;
let suffix: string;
let rendered: RbacObject[];
let api: Awaited<ReturnType<typeof tokenKubeconfig>>;
let impersonator: Awaited<ReturnType<typeof tokenKubeconfig>>;
let controller: Awaited<ReturnType<typeof tokenKubeconfig>>;
let open: ApiProcess;
let idp: OidcFixture;

beforeAll(async () => {
  [ns, other] = await Promise.all([createNamespace('berth-single'), createNamespace('berth-single-other')]);
  suffix = `-${ns.slice(-6)}`;
  // manifests/base as a whole, moved to `ns`; nameSuffix keeps the cluster-scoped names (the
  // controller's ClusterRole) apart from the test control plane's own and other files'.
  rendered = await applyRbacOf(
    kustomization(scratch.dir, `${ns}-base`, 'base', `namespace: ${ns}\nnameSuffix: "${suffix}"\n`),
  );
  // The single-tenant API with the optional impersonation component, as docs/install.md adds it.
  const dir = join(scratch.dir, `${ns}-imp`);
  const component = relative(dir, join(MANIFESTS, 'components', 'impersonation'));
  await applyRbacOf(
    kustomization(
      scratch.dir,
      `${ns}-imp`,
      'base/api',
      `namespace: ${ns}\nnameSuffix: "${suffix}-imp"\ncomponents: [${component}]\n`,
    ),
  );
  await mustKubectl([
    'create',
    'secret',
    'generic',
    'theirs',
    '-n',
    other,
    `--from-literal=k=${OTHER_SECRET}`,
  ]);
  await mustKubectl(['create', 'configmap', 'theirs', '-n', other, '--from-literal=k=v']);
  await mustKubectl(['create', 'configmap', 'platform-settings', '-n', ns, '--from-literal=k=v']);
  [api, impersonator, controller, idp] = await Promise.all([
    tokenKubeconfig(`berth-api${suffix}`, ns),
    tokenKubeconfig(`berth-api${suffix}-imp`, ns),
    tokenKubeconfig(`berth-controller${suffix}`, ns),
    startOidcProvider(),
  ]);
  open = await startApi(api.path, ns, 'open');
}, 300_000);

afterAll(async () => {
  await stopAll();
  await idp?.close();
  scratch.remove();
});

/** Every answer of `questions` for an identity, as one object (one diff shows every wrong answer). */
async function answers(kc: typeof api.kc, questions: string[]) {
  return Object.fromEntries(await Promise.all(questions.map(async (q) => [q, await canI(kc, q)])));
}
const all = (qs: string[], value: boolean) => Object.fromEntries(qs.map((q) => [q, value]));

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
    expect(await answers(api.kc, allowed)).toEqual(all(allowed, true));
    expect(await answers(api.kc, denied)).toEqual(all(denied, false));
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

describe('the impersonation component', () => {
  it('impersonates users and the listed groups only: never system:masters, service accounts or extras', async () => {
    const allowed = [
      'impersonate users',
      'impersonate users/oidc:someone',
      'impersonate groups/berth-marketplace-editors',
      'impersonate groups/berth-marketplace-viewers',
    ];
    const denied = [
      'impersonate groups',
      'impersonate groups/system:masters',
      'impersonate groups/system:authenticated',
      'impersonate groups/unlisted',
      'impersonate serviceaccounts',
      `impersonate serviceaccounts/berth-controller${suffix} -n ${ns}`,
      'impersonate userextras.authentication.k8s.io',
      'impersonate uids.authentication.k8s.io',
    ];
    expect(await answers(impersonator.kc, allowed)).toEqual(all(allowed, true));
    expect(await answers(impersonator.kc, denied)).toEqual(all(denied, false));
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
    expect(await answers(controller.kc, allowed)).toEqual(all(allowed, true));
    expect(await answers(controller.kc, denied)).toEqual(all(denied, false));
  });
});

describe('the marketplace for users', () => {
  const env = () => ({
    OIDC_ISSUER_URL: idp.issuer,
    OIDC_APPLICATION_ID: AUD,
    OIDC_USERNAME_PREFIX: 'oidc:',
  });
  const as = (url: string, jwt: string) => client(url, { authorization: `Bearer ${jwt}` });
  const token = (claims: Record<string, unknown>) =>
    idp.signWithProviderKey({ aud: AUD, ...claims }, Math.floor(Date.now() / 1000) + 600);
  const sources = () => `/api/v1/namespaces/${ns}/marketplace-sources`;

  beforeAll(async () => {
    // The editor Role of rule 8, bound to one user by name and to a listed group.
    await mustKubectl([
      'apply',
      '-n',
      ns,
      '-f',
      join(MANIFESTS, 'overlays', 'tenant', 'marketplace-editor.yaml'),
    ]);
    const bind = (name: string, kind: string, subject: string) =>
      mustKubectl([
        'create',
        'rolebinding',
        name,
        '-n',
        ns,
        '--role=berth-marketplace-editor',
        `--${kind}=${subject}`,
      ]);
    await bind('ed-user', 'user', 'oidc:ed-user');
    await bind('ed-group', 'group', 'berth-marketplace-editors');
  });

  it('answers the permissions probe without any right to impersonate', async () => {
    // The plain base account: impersonating anyone is refused to it (above).
    const sso = await startApi(api.path, ns, 'sso', env());
    const editor = as(sso.url, await token({ sub: 'ed-user' }));
    const nobody = as(sso.url, await token({ sub: 'nobody' }));
    expect((await editor.get(`${sources()}/permissions`)).body).toEqual({ canEdit: true });
    expect((await nobody.get(`${sources()}/permissions`)).body).toEqual({ canEdit: false });
    // Reads and writes still run as the user, so without the component they are refused.
    const read = await editor.get(sources());
    expect(read.status, read.text).toBe(403);
    expect(read.text).toMatch(/impersonate/);
  });

  it('acts as the user with the listed groups only, dropping the others, system:masters included', async () => {
    const sso = await startApi(impersonator.path, ns, 'sso', env());
    const groupEditor = as(
      sso.url,
      await token({ sub: 'grp-user', groups: ['unlisted', 'berth-marketplace-editors', 'system:masters'] }),
    );
    expect((await groupEditor.get(`${sources()}/permissions`)).body).toEqual({ canEdit: true });
    const made = await groupEditor.post(sources(), { name: 'by-group', url: 'https://hub.example/g' });
    expect(made.status, made.text).toBe(201);
    expect((await groupEditor.del(`${sources()}/by-group`)).status).toBe(204);
    // Only the unlisted group: the user alone has no rights, and nothing is granted through it.
    const unlisted = as(sso.url, await token({ sub: 'other-user', groups: ['unlisted'] }));
    expect((await unlisted.get(`${sources()}/permissions`)).body).toEqual({ canEdit: false });
    expect((await unlisted.post(sources(), { name: 'x', url: 'https://hub.example/x' })).status).toBe(403);
    expect(sso.proc.output()).not.toMatch(/cannot impersonate/i);
  });
});
