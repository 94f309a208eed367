import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { Kinds, SHARED_CACHE } from '../../pkg/api/index.ts';
import { InformerCache } from '../../pkg/kube/cache.ts';
import { CoreKinds } from '../../pkg/kube/kinds.ts';
import { createNamespace, kubeConfig, kubectl } from '../support/kube.ts';
import { type RunningGateway, startGateway } from './harness.ts';

let gw: RunningGateway;
let cachedGw: RunningGateway;
let cache: InformerCache;
let ns: string;

beforeAll(async () => {
  ns = await createNamespace('generic');
  await kubeConfig()
    .makeApiClient(CoreV1Api)
    .createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'settings' }, data: { a: '1' } } });
  const applied = await kubectl(
    ['apply', '-n', ns, '-f', '-'],
    'apiVersion: berth.dev/v1alpha1\nkind: Agent\nmetadata: {name: helper}\nspec: {prompt: be nice}\n',
  );
  expect(applied.code, applied.stderr).toBe(0);
  gw = await startGateway({ kc: kubeConfig('gateway'), namespace: ns });
  cache = InformerCache.of({ kc: kubeConfig('gateway'), namespace: ns }, SHARED_CACHE);
  cache.start();
  await cache.waitForSync(30_000);
  cachedGw = await startGateway({ kc: kubeConfig('gateway'), namespace: ns, cache });
});
afterAll(async () => {
  await Promise.all([gw?.close(), cachedGw?.close()]);
  await cache?.stop();
});

const get = (path: string, accept = 'application/json') => fetch(`${gw.url}${path}`, { headers: { accept } });

describe('generic resource API', () => {
  it('lists a core kind in the instance namespace by default, by Kind or plural', async () => {
    for (const kind of ['ConfigMap', 'configmaps']) {
      const res = await get(`/v1/resources/api/v1/${kind}`);
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body.items.map((i: any) => i.metadata.name)).toContain('settings');
    }
  });

  it('returns one core object as YAML on Accept: application/yaml', async () => {
    const res = await get(`/v1/resources/api/v1/configmaps/settings?namespace=${ns}`, 'application/yaml');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/yaml');
    const obj = parse(await res.text());
    expect(obj).toMatchObject({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', namespace: ns },
      data: { a: '1' },
    });
    expect(obj.metadata.managedFields).toBeUndefined();
  });

  it('reads a custom resource through its group', async () => {
    const res = await get(`/v1/resources/apis/berth.dev/v1alpha1/agents/helper?namespace=${ns}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      kind: 'Agent',
      metadata: { name: 'helper' },
      spec: { prompt: 'be nice' },
    });
  });

  it('falls back to cluster scope for cluster-scoped kinds', async () => {
    const res = await get(`/v1/resources/api/v1/Namespace/${ns}`);
    expect(res.status).toBe(200);
    expect((await res.json()).metadata.name).toBe(ns);
    const crd = await get(
      '/v1/resources/apis/apiextensions.k8s.io/v1/customresourcedefinitions/queries.berth.dev',
      'application/yaml',
    );
    expect(parse(await crd.text()).spec.group).toBe('berth.dev');
  });

  it("passes the API server's Status through when the object is missing in both scopes", async () => {
    const res = await get(`/v1/resources/api/v1/configmaps/nope?namespace=${ns}`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ kind: 'Status', reason: 'NotFound', code: 404 });
  });

  it('answers 404 with a Status for a kind no API group has', async () => {
    const res = await get('/v1/resources/apis/example.com/v1/widgets');
    expect(res.status).toBe(404);
    expect((await res.json()).kind).toBe('Status');
  });
});

describe('service basics', () => {
  it('serves /health, the OpenAPI document and the interactive docs with local assets', async () => {
    expect((await get('/health')).status).toBe(200);
    const doc = await (await get('/openapi.json')).json();
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/v1/namespaces/{namespace}/agents',
        '/v1/namespaces/{namespace}/evaluations/{name}/cancel',
        '/v1/context',
      ]),
    );
    const page = await (await get('/docs')).text();
    expect(page).toContain('/docs/assets/swagger-ui-bundle.js');
    expect(page).not.toMatch(/https?:\/\/(cdn|unpkg)/);
    const asset = await get('/docs/assets/swagger-ui-bundle.js');
    expect(asset.status).toBe(200);
    expect((await asset.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
  });

  it('answers unknown routes and bad bodies with the error envelope and a request id', async () => {
    const missing = await get('/v1/nothing-here');
    expect(missing.status).toBe(404);
    const body = await missing.json();
    expect(body.error).toMatchObject({ code: 'not_found' });
    expect(body.error.requestId).toBe(missing.headers.get('x-request-id'));

    const bad = await fetch(`${gw.url}/v1/namespaces/${ns}/agents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"name": "x", "spec": {',
    });
    expect(bad.status).toBe(400);
    const wrong = await fetch(`${gw.url}/v1/namespaces/${ns}/agents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x', spec: { prompt: 3 } }),
    });
    expect(wrong.status).toBe(400);
    expect((await wrong.json()).error.message).toContain('spec.prompt');
  });

  it('reports the instance context', async () => {
    const ctx = await (await get(`/v1/context?namespace=other`)).json();
    expect(ctx).toMatchObject({ namespace: 'other', instanceNamespace: ns, broker: false });
  });

  it('answers /v1/broker/* with 503 when no broker is configured and 405 for writes', async () => {
    const res = await get('/v1/broker/messages');
    expect(res.status).toBe(503);
    expect((await res.json()).error.message).toContain('BROKER_URL');
    const post = await fetch(`${gw.url}/v1/broker/messages`, { method: 'POST' });
    expect(post.status).toBe(405);
  });
});

describe('generic resource API over the shared informer cache', () => {
  /** The same GET answered live and from the cache. */
  const both = (path: string) =>
    Promise.all(
      [gw, cachedGw].map(async (g) => {
        const res = await fetch(`${g.url}${path}`);
        return { status: res.status, body: await res.json() };
      }),
    );

  it('answers cached kinds as the API server does: same list order, same 404 status', async () => {
    const more = ['zeta', 'alpha'].map(
      (n) => `---\napiVersion: berth.dev/v1alpha1\nkind: Agent\nmetadata: {name: ${n}}\nspec: {prompt: p}\n`,
    );
    const applied = await kubectl(['apply', '-n', ns, '-f', '-'], more.join(''));
    expect(applied.code, applied.stderr).toBe(0);
    await cache.waitFor(Kinds.Agent, ns, 'alpha', (o) => !!o, { timeoutMs: 5000 });
    const [live, cached] = await both('/v1/resources/apis/berth.dev/v1alpha1/agents');
    expect([live?.status, cached?.status]).toEqual([200, 200]);
    const names = (l: { items: Array<{ metadata: { name: string } }> }) =>
      l.items.map((i) => i.metadata.name);
    expect(names(cached?.body)).toEqual(names(live?.body));
    const [missingLive, missing] = await both('/v1/resources/apis/berth.dev/v1alpha1/agents/nope');
    expect(missing?.status).toBe(404);
    expect(missing?.body).toMatchObject({
      kind: 'Status',
      reason: 'NotFound',
      code: 404,
      message: missingLive?.body.message,
    });
  });

  it('reads kinds the cache holds only through a selector (ConfigMaps) from the API server', async () => {
    const res = await fetch(`${cachedGw.url}/v1/resources/api/v1/configmaps/settings`);
    expect(res.status).toBe(200);
    const list = await (await fetch(`${cachedGw.url}/v1/resources/api/v1/configmaps`)).json();
    expect(list.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toContain('settings');
  });
});

describe('generic resource API and Secrets (issue 26 item 1)', () => {
  const VALUE = 'generic-integration-secret-9c2d71';
  const spellings = ['Secret', 'secrets', 'Secrets', 'SECRETS', 'secret', 'SECRET', 'sEcReTs'];

  it('shows whatever resolves to core secrets as metadata and key names: every spelling, JSON and YAML, get and list, live and cached', async () => {
    const applied = await kubectl(
      ['apply', '-n', ns, '-f', '-'],
      `apiVersion: v1\nkind: Secret\nmetadata: {name: hidden, annotations: {team: red}}\nstringData: {token: ${VALUE}}\n`,
    );
    expect(applied.code, applied.stderr).toBe(0);
    await cache.waitFor(CoreKinds.Secret, ns, 'hidden', (o) => !!o, { timeoutMs: 5000 });
    for (const g of [gw, cachedGw])
      for (const kind of spellings)
        for (const accept of ['application/json', 'application/yaml'])
          for (const path of [`/v1/resources/api/v1/${kind}/hidden`, `/v1/resources/api/v1/${kind}`]) {
            const what = `${g === gw ? 'live' : 'cached'} ${path} ${accept}`;
            const res = await fetch(`${g.url}${path}`, { headers: { accept } });
            const text = await res.text();
            expect(res.status, what).toBe(200);
            expect(text, what).not.toContain(VALUE);
            expect(text, what).not.toContain(Buffer.from(VALUE).toString('base64'));
            expect(text, what).not.toContain('last-applied-configuration');
            expect(text, what).not.toContain('managedFields');
            const body = parse(text);
            const items = body.items ?? [body];
            const secret = items.find((i: any) => i.metadata.name === 'hidden');
            expect(secret, what).toMatchObject({ kind: 'Secret', keys: ['token'] });
            expect(secret.metadata.annotations, what).toEqual({ team: 'red' });
            for (const i of items) {
              expect(i.data, what).toBeUndefined();
              expect(i.stringData, what).toBeUndefined();
            }
          }
  });

  it('answers a kind that resolves to nothing with a 404 Status, never a guessed plural', async () => {
    for (const kind of ['secretss', 'Secretz', 'configmapss']) {
      const res = await get(`/v1/resources/api/v1/${kind}`);
      expect(res.status, kind).toBe(404);
      expect(await res.json()).toMatchObject({ kind: 'Status', reason: 'NotFound', code: 404 });
    }
    // Discovery-only kinds resolve by singular and any case too.
    for (const kind of ['pod', 'PODS', 'Pod'])
      expect((await get(`/v1/resources/api/v1/${kind}`)).status, kind).toBe(200);
  });
});
