/**
 * Least privilege of the tenant install, proven against the real API server (issue 12, item 3).
 * Two tenants are installed from manifests/overlays/tenant exactly as the docs say; each runs a real
 * `berth api` with its own ServiceAccount's token. Every feature works within the tenant; every
 * request for the other tenant is refused, and not only by the API's confinement: the token itself
 * is forbidden there by the API server.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { berthScheme } from '../../pkg/api/index.ts';
import { createClient } from '../../pkg/kube/client/index.ts';
import { KubeError } from '../../pkg/kube/errors.ts';
import { CoreKinds } from '../../pkg/kube/kinds.ts';
import { basic, client } from '../gateway/support.ts';
import { kubectl } from '../support/kube.ts';
import { eventually } from '../support/wait.ts';
import {
  type ApiProcess,
  canI,
  installTenant,
  scratchDir,
  startApi,
  stopAll,
  tokenKubeconfig,
} from './support.ts';

const scratch = scratchDir();
const SECRET_B = 'sk-tenant-b-model-key-never-shown';
const SECRET_B64 = Buffer.from(SECRET_B).toString('base64');
let a: string;
let b: string;
let tokenA: Awaited<ReturnType<typeof tokenKubeconfig>>;
let apiA: ApiProcess;
let apiB: ApiProcess;
/** B's API key, made through B's own API. */
let keyB: { public_key: string; secret_key: string };

beforeAll(async () => {
  [a, b] = await Promise.all([
    installTenant(scratch.dir, 'tenant-lp-a'),
    installTenant(scratch.dir, 'tenant-lp-b'),
  ]);
  const tokenB = await tokenKubeconfig('berth-api', b);
  tokenA = await tokenKubeconfig('berth-api', a);
  [apiA, apiB] = await Promise.all([startApi(tokenA.path, a, 'open'), startApi(tokenB.path, b, 'open')]);
  // Tenant B's own objects, made through B's own API with B's own identity.
  const own = client(apiB.url);
  const made = await Promise.all([
    own.post(`/v1/namespaces/${b}/secrets`, { name: 'model-key', stringData: { apiKey: SECRET_B } }),
    own.post(`/v1/namespaces/${b}/agents`, { name: 'b-agent', spec: { prompt: 'b' } }),
    own.post(`/v1/namespaces/${b}/queries`, { name: 'b-query', spec: queryTo('b-agent') }),
    own.post('/v1/api-keys', { name: 'b-key' }),
  ]);
  for (const r of made) expect(r.status, r.text).toBe(201);
  keyB = made[3]?.body;
}, 300_000);

afterAll(async () => {
  await stopAll();
  scratch.remove();
});

const queryTo = (agent: string) => ({ input: 'hi', target: { type: 'agent', name: agent } });

describe("a tenant's API running as its own ServiceAccount", () => {
  it('creates, lists, gets and deletes agents, queries, secrets and API keys in its namespace', async () => {
    const api = client(apiA.url);
    const base = `/v1/namespaces/${a}`;
    for (const [plural, body] of [
      ['agents', { name: 'a-agent', spec: { prompt: 'a' } }],
      ['queries', { name: 'a-query', spec: queryTo('a-agent') }],
      ['secrets', { name: 'a-secret', stringData: { apiKey: 'sk-a' } }],
    ] as const) {
      const created = await api.post(`${base}/${plural}`, body);
      expect(created.status, `POST ${plural}: ${created.text}`).toBe(201);
      const list = await api.get(`${base}/${plural}`);
      expect(list.status, list.text).toBe(200);
      expect(list.body.items.map((o: any) => o.metadata?.name ?? o.name)).toContain(body.name);
      expect((await api.get(`${base}/${plural}/${body.name}`)).status).toBe(200);
      const deleted = await api.del(`${base}/${plural}/${body.name}`);
      expect(deleted.status, `DELETE ${plural}: ${deleted.text}`).toBeLessThan(300);
      if (plural === 'queries') {
        // Created with the controller's cleanup finalizer; no controller runs here, so release it
        // as the controller would after the purge (a patch the tenant Role allows).
        const released = await api.patch(`${base}/${plural}/${body.name}`, {
          metadata: { finalizers: null },
        });
        expect(released.status, released.text).toBe(200);
      }
      await eventually(async () => (await api.get(`${base}/${plural}/${body.name}`)).status === 404);
    }

    const key = await api.post('/v1/api-keys', { name: 'a-key' });
    expect(key.status, key.text).toBe(201);
    const keys = (await api.get('/v1/api-keys')).body.items.map((k: any) => k.public_key);
    expect(keys).toEqual([key.body.public_key]); // B's key is not among them
    expect((await api.del(`/v1/api-keys/${key.body.public_key}`)).status).toBe(204);
  });

  it('serves every other read it offers with the tenant Role alone', async () => {
    const api = client(apiA.url);
    for (const path of [
      ...['models', 'teams', 'evaluators', 'evaluations'].map((p) => `/v1/namespaces/${a}/${p}`),
      ...['pods', 'services', 'configmaps', 'secrets'].map((k) => `/v1/resources/api/v1/${k}`),
      `/v1/resources/api/v1/secrets?namespace=${a}`,
      ...['tools', 'memories', 'agents'].map((k) => `/v1/resources/apis/berth.dev/v1alpha1/${k}`),
      '/compat/v1/models',
    ]) {
      const r = await api.get(path);
      expect(r.status, `GET ${path}: ${r.text}`).toBe(200);
    }
    expect((await api.get('/v1/namespaces')).body.items).toEqual([{ name: a }]);
    // Its informers synced on the namespaced Role; nothing was ever forbidden to it.
    expect(apiA.proc.output()).not.toMatch(/forbidden/i);
  });
});

describe('tenant A and tenant B', () => {
  it("refuses every request of A's API for B's agents, queries, secrets and keys, leaking nothing", async () => {
    const api = client(apiA.url);
    const nsB = `/v1/namespaces/${b}`;
    const requests: Array<[string, string, unknown?]> = [
      ...['agents', 'queries', 'secrets', 'models', 'teams', 'evaluations'].map(
        (p) => ['GET', `${nsB}/${p}`] as [string, string],
      ),
      ['GET', `${nsB}/agents/b-agent`],
      ['GET', `${nsB}/queries/b-query`],
      ['GET', `${nsB}/secrets/model-key`],
      ['POST', `${nsB}/agents`, { name: 'planted', spec: { prompt: 'x' } }],
      ['POST', `${nsB}/queries`, { name: 'planted', spec: queryTo('b-agent') }],
      ['POST', `${nsB}/secrets`, { name: 'planted', stringData: { k: 'v' } }],
      ['PATCH', `${nsB}/agents/b-agent`, { spec: { prompt: 'changed' } }],
      ['PUT', `${nsB}/secrets/model-key`, { stringData: { apiKey: 'replaced' } }],
      ['DELETE', `${nsB}/agents/b-agent`],
      ['DELETE', `${nsB}/queries/b-query`],
      ['DELETE', `${nsB}/secrets/model-key`],
      ['GET', `/v1/resources/api/v1/secrets?namespace=${b}`],
      ['GET', `/v1/resources/api/v1/secrets/model-key?namespace=${b}`],
      ['GET', `/v1/resources/apis/berth.dev/v1alpha1/agents?namespace=${b}`],
      ['GET', `/v1/resources/apis/berth.dev/v1alpha1/queries/b-query?namespace=${b}`],
      ['POST', '/v1/namespaces', { name: 'made-by-tenant-a' }],
    ];
    for (const [method, path, body] of requests) {
      const r = await api.call(method, path, body);
      expect(r.status, `${method} ${path}: ${r.text}`).toBe(403);
      expect(r.text).not.toContain(SECRET_B64);
    }
    // Without a namespace the generic API answers for A (or falls back to the cluster scope, which
    // the tenant Role cannot reach): never B's objects.
    for (const path of [
      '/v1/resources/api/v1/secrets',
      '/v1/resources/api/v1/secrets/model-key',
      '/v1/resources/api/v1/namespaces',
      `/v1/resources/api/v1/namespaces/${b}`,
      '/v1/resources/apis/berth.dev/v1alpha1/queries/b-query',
    ]) {
      const r = await api.get(path);
      expect(r.text, path).not.toContain(SECRET_B64);
      expect(r.text, path).not.toContain(SECRET_B);
      if (path !== '/v1/resources/api/v1/secrets')
        expect(r.status, `${path}: ${r.text}`).toBeGreaterThanOrEqual(400);
      expect(r.status, path).toBeLessThan(500);
    }
    // B's key is not A's to revoke; it is still listed by B.
    expect((await api.del(`/v1/api-keys/${keyB.public_key}`)).status).toBe(404);
    const own = client(apiB.url);
    expect((await own.get('/v1/api-keys')).body.items.map((k: any) => k.public_key)).toContain(
      keyB.public_key,
    );
    // Nothing of B changed and nothing was planted there.
    expect((await own.get(`${nsB}/agents/b-agent`)).body.spec.prompt).toBe('b');
    expect((await own.get(`${nsB}/secrets/model-key`)).status).toBe(200);
    expect((await own.get(`${nsB}/agents/planted`)).status).toBe(404);
  });

  it("does not let B's API key in at A, while A's own key works there", async () => {
    const key = (await client(apiA.url).post('/v1/api-keys', { name: 'a-basic' })).body;
    const guarded = await startApi(tokenA.path, a, 'basic');
    const withB = client(guarded.url, { authorization: basic(keyB.public_key, keyB.secret_key) });
    expect((await withB.get(`/v1/namespaces/${a}/agents`)).status).toBe(401);
    expect((await withB.get(`/v1/namespaces/${b}/agents`)).status).toBe(401);
    const withA = client(guarded.url, { authorization: basic(key.public_key, key.secret_key) });
    expect((await withA.get(`/v1/namespaces/${a}/agents`)).status).toBe(200);
    expect((await withA.get(`/v1/namespaces/${b}/agents`)).status).toBe(403);
    guarded.proc.proc.kill('SIGTERM');
    expect(await guarded.proc.exited).toBe(0);
  });

  it("forbids A's token itself, used directly against the API server, to read or write B", async () => {
    const asA = createClient({ kc: tokenA.kc, scheme: berthScheme() });
    const forbidden = async (what: string, p: Promise<unknown>) => {
      const err = await p.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, what).toBeInstanceOf(KubeError);
      expect((err as KubeError).code, what).toBe(403);
    };
    await forbidden('get B secret', asA.get(CoreKinds.Secret, { namespace: b, name: 'model-key' }));
    await forbidden('list B secrets', asA.list(CoreKinds.Secret, { namespace: b }));
    await forbidden('list all secrets', asA.list(CoreKinds.Secret, {}));
    // kubectl with the token kubeconfig agrees, for reads and writes alike.
    const as = ['--kubeconfig', tokenA.path];
    for (const args of [
      ['get', 'secret', 'model-key', '-n', b, '-o', 'yaml'],
      ['get', 'agents,queries,configmaps,pods,services', '-n', b],
      ['get', 'secrets', '--all-namespaces'],
      ['delete', 'agent', 'b-agent', '-n', b],
      ['create', 'secret', 'generic', 'planted', '-n', b, '--from-literal=k=v'],
      ['get', 'namespaces'],
      ['get', 'clusterroles'],
    ]) {
      const r = await kubectl([...as, ...args]);
      expect(r.code, `kubectl ${args.join(' ')}: ${r.stdout}`).not.toBe(0);
      expect(r.stderr, args.join(' ')).toMatch(/forbidden/i);
      expect(r.stdout + r.stderr).not.toContain(SECRET_B64);
    }
    for (const q of ['impersonate users', 'create namespaces', 'list secrets -A', `create roles -n ${a}`])
      expect(await canI(tokenA.kc, q), q).toBe(false);
    // …while its own namespace is open to it, as the API needs.
    const mine = await kubectl([...as, 'get', 'secrets,agents,queries,configmaps,pods,services', '-n', a]);
    expect(mine.code, mine.stderr).toBe(0);
  });
});
