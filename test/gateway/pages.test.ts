/**
 * What the dashboard needs of the API beyond the spec: lists a page at a time (limit, continue,
 * sort, q) from the informer cache, Tools and Memories over /v1, and the permissions probe — on
 * the real API server with the gateway's own identity.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNamespace } from '../support/kube.ts';
import { eventually } from '../support/wait.ts';
import { type Client, client, startService, type TestService } from './support.ts';

let svc: TestService;
let api: Client;
let ns: string;
const names = (b: { items: Array<{ metadata: { name: string } }> }) => b.items.map((i) => i.metadata.name);

beforeAll(async () => {
  ns = await createNamespace('gw-pages');
  svc = await startService({ namespace: ns });
  api = client(svc.url);
  for (const n of ['q-c', 'q-a', 'q-e', 'q-b', 'x-d']) {
    const r = await api.post(`/v1/namespaces/${ns}/queries`, {
      name: n,
      spec: { input: 'hi', target: { type: 'model', name: 'm' } },
    });
    expect(r.status, r.text).toBe(201);
  }
});
afterAll(() => svc?.close());

describe('paged lists', () => {
  it('pages by name with continue, newest first by creation, and filters by name', async () => {
    const first = await api.get(`/v1/namespaces/${ns}/queries?limit=2`);
    expect(first.status, first.text).toBe(200);
    expect(names(first.body)).toEqual(['q-a', 'q-b']);
    expect(first.body).toMatchObject({ count: 2, total: 5 });
    const next = await api.get(
      `/v1/namespaces/${ns}/queries?limit=2&continue=${encodeURIComponent(first.body.continue)}`,
    );
    expect(names(next.body)).toEqual(['q-c', 'q-e']);
    const newest = await api.get(`/v1/namespaces/${ns}/queries?limit=1&sort=-created`);
    expect(names(newest.body)).toEqual(['x-d']);
    const filtered = await api.get(`/v1/namespaces/${ns}/queries?q=q-&sort=-name`);
    expect(names(filtered.body)).toEqual(['q-e', 'q-c', 'q-b', 'q-a']);
    expect(filtered.body.continue).toBeUndefined();
    // Without the parameters the list is whole, as before.
    const whole = await api.get(`/v1/namespaces/${ns}/queries`);
    expect(whole.body).toMatchObject({ count: 5 });
    expect(whole.body.continue).toBeUndefined();
  });

  it('refuses bad parameters with a 400 naming them', async () => {
    for (const qs of [
      'limit=0',
      'limit=5000',
      'limit=abc',
      'sort=uid',
      'continue=garbage',
      `q=${'x'.repeat(300)}`,
    ]) {
      const r = await api.get(`/v1/namespaces/${ns}/queries?${qs}`);
      expect(r.status, qs).toBe(400);
      expect(r.body.error.code, qs).toBe('invalid_request');
    }
  });
});

describe('tools and memories over /v1', () => {
  it('creates, reads, patches and deletes them, with the schema checked before the API server', async () => {
    const tool = await api.post(`/v1/namespaces/${ns}/tools`, {
      name: 'weather',
      spec: { description: 'the weather', http: { url: 'https://weather.example.com/q' } },
    });
    expect(tool.status, tool.text).toBe(201);
    const memory = await api.post(`/v1/namespaces/${ns}/memories`, {
      name: 'notes',
      spec: { address: { value: 'http://127.0.0.1:1/' } },
    });
    expect(memory.status, memory.text).toBe(201);
    const bad = await api.post(`/v1/namespaces/${ns}/tools`, { name: 'broken', spec: { http: { url: 42 } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.issues.map((i: { path: string }) => i.path)).toContain('spec.http.url');
    await eventually(async () =>
      names((await api.get(`/v1/namespaces/${ns}/tools`)).body).includes('weather'),
    );
    const patched = await api.patch(`/v1/namespaces/${ns}/memories/notes`, { spec: { headers: [] } });
    expect(patched.status, patched.text).toBe(200);
    expect((await api.del(`/v1/namespaces/${ns}/tools/weather`)).status).toBe(200);
  });
});

describe('the permissions probe', () => {
  it("answers the API account's rights per kind, and approvals", async () => {
    const r = await api.get(`/v1/namespaces/${ns}/permissions`);
    expect(r.status, r.text).toBe(200);
    expect(r.body.namespace).toBe(ns);
    for (const plural of ['agents', 'teams', 'models', 'tools', 'memories', 'queries', 'evaluations'])
      expect(r.body.resources[plural], plural).toEqual({ create: true, update: true, delete: true });
    expect(typeof r.body.approve).toBe('boolean');
  });

  it('is refused for another namespace by a confined instance, and checks the name', async () => {
    const confined = await startService({ namespace: ns, confined: true, cache: svc.cache });
    try {
      const other = await client(confined.url).get('/v1/namespaces/kube-system/permissions');
      expect(other.status, other.text).toBe(403);
      expect((await client(confined.url).get(`/v1/namespaces/${ns}/permissions`)).status).toBe(200);
    } finally {
      await confined.close();
    }
    expect((await api.get('/v1/namespaces/Not_A_Name/permissions')).status).toBe(400);
  });
});
