/**
 * An API instance installed for one namespace serves only it (issue 12 item 2): other namespaces
 * are refused with 403 before any API server call, whatever its identity could reach; the generic
 * API never returns Secret values.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNamespace } from '../support/kube.ts';
import { client, startService, type TestService } from './support.ts';

let a: string;
let b: string;
let svc: TestService;
let open: TestService;
beforeAll(async () => {
  [a, b] = await Promise.all([createNamespace('tenant-a'), createNamespace('tenant-b')]);
  svc = await startService({ namespace: a, confined: true });
  open = await startService({ namespace: a });
});
afterAll(async () => {
  await svc?.close();
  await open?.close();
});

const secret = (name: string) => ({ name, stringData: { apiKey: 'sk-very-secret-value' } });

describe('an API instance confined to its namespace', () => {
  it('serves its own namespace', async () => {
    const api = client(svc.url);
    expect((await api.post(`/v1/namespaces/${a}/secrets`, secret('own'))).status).toBe(201);
    expect((await api.get(`/v1/namespaces/${a}/agents`)).status).toBe(200);
    const ns = await api.get('/v1/namespaces');
    expect(ns.status).toBe(200);
    expect(ns.body.items).toEqual([{ name: a }]);
  });

  it('refuses every request for another namespace with 403, reads and writes alike', async () => {
    // The gateway identity of the tests may reach b: only the confinement stops these.
    expect((await client(open.url).post(`/v1/namespaces/${b}/secrets`, secret('theirs'))).status).toBe(201);
    const api = client(svc.url);
    for (const [method, path, body] of [
      ['GET', `/v1/namespaces/${b}/agents`],
      ['GET', `/v1/namespaces/${b}/secrets`],
      ['GET', `/v1/namespaces/${b}/secrets/theirs`],
      ['POST', `/v1/namespaces/${b}/agents`, { name: 'x', spec: { prompt: 'p' } }],
      ['DELETE', `/v1/namespaces/${b}/secrets/theirs`],
      ['GET', `/v1/resources/api/v1/secrets?namespace=${b}`],
      ['GET', `/v1/resources/api/v1/secrets/theirs?namespace=${b}`],
      ['GET', `/v1/resources/apis/berth.dev/v1alpha1/agents?namespace=${b}`],
      ['POST', '/v1/namespaces', { name: 'made-by-a-tenant' }],
    ] as const) {
      const res = await api.call(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.text).not.toContain('sk-very-secret-value');
      expect(res.body.error.message).toContain(`"${a}" only`);
    }
    // The Secret of b is still there: the DELETE never reached the API server.
    expect((await client(open.url).get(`/v1/namespaces/${b}/secrets/theirs`)).status).toBe(200);
  });
});

describe('the generic resource API and Secrets', () => {
  it('returns metadata and key names only, never values or the last-applied annotation', async () => {
    for (const svcUnderTest of [svc, open]) {
      const api = client(svcUnderTest.url);
      const one = await api.get(`/v1/resources/api/v1/secrets/own?namespace=${a}`);
      expect(one.status).toBe(200);
      expect(one.body.data).toBeUndefined();
      expect(one.body.stringData).toBeUndefined();
      expect(one.body.keys).toEqual(['apiKey']);
      expect(one.text).not.toContain(Buffer.from('sk-very-secret-value').toString('base64'));
      const list = await api.get(`/v1/resources/api/v1/secrets?namespace=${a}`);
      expect(list.status).toBe(200);
      expect(list.body.items.every((s: { data?: unknown }) => s.data === undefined)).toBe(true);
      expect(list.text).not.toContain(Buffer.from('sk-very-secret-value').toString('base64'));
      const yaml = await api.call('GET', `/v1/resources/api/v1/secrets/own?namespace=${a}`, undefined, {
        accept: 'application/yaml',
      });
      expect(yaml.text).toContain('apiKey');
      expect(yaml.text).not.toContain(Buffer.from('sk-very-secret-value').toString('base64'));
    }
  });
});
