import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreKinds } from '../../pkg/kube/kinds.ts';
import { createNamespace, kubectl } from '../support/kube.ts';
import { type Client, client, startService, type TestService } from './support.ts';

let svc: TestService;
let api: Client;
let ns: string;
const base = () => `/v1/namespaces/${ns}/secrets`;
// Distinctive values: none of them may ever appear in a response.
const VALUES = {
  token: 'sk-proj-Zq9Wm2Lr7Tx4Vb8Nc1Kd5Hf3Gj6Pa0Sy',
  other: 'value-that-must-stay-hidden-41c7',
  applied: 'applied-by-kubectl-value-9e2f',
  replaced: 'put-replacement-value-7d1a',
  merged: 'patch-merged-value-3b8c',
};

beforeAll(async () => {
  ns = await createNamespace('gw-secrets');
  svc = await startService({ namespace: ns });
  api = client(svc.url);
});
afterAll(() => svc?.close());

function expectNoValues(text: string) {
  for (const v of Object.values(VALUES)) {
    expect(text).not.toContain(v);
    expect(text).not.toContain(Buffer.from(v).toString('base64'));
  }
}

describe('secrets show metadata and key names, never values', () => {
  it('create, get, list, put, patch, delete', async () => {
    const created = await api.post(base(), {
      name: 'provider',
      stringData: { token: VALUES.token },
      data: { other: Buffer.from(VALUES.other).toString('base64') },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({
      kind: 'Secret',
      type: 'Opaque',
      keys: ['other', 'token'],
      metadata: { name: 'provider' },
    });
    expect(created.body.data).toBeUndefined();
    expect(created.body.stringData).toBeUndefined();

    const got = await api.get(`${base()}/provider`);
    expect(got.body.keys).toEqual(['other', 'token']);
    const list = await api.get(base());
    expect(list.body.items.map((s: any) => s.metadata.name)).toEqual(['provider']);
    expect(list.body.items[0].keys).toEqual(['other', 'token']);

    const put = await api.put(`${base()}/provider`, { stringData: { fresh: VALUES.replaced } });
    expect(put.status, put.text).toBe(200);
    expect(put.body.keys).toEqual(['fresh']);
    expect((await api.get(`${base()}/provider`)).body.keys).toEqual(['fresh']);

    const patch = await api.patch(`${base()}/provider`, { stringData: { more: VALUES.merged } });
    expect(patch.status, patch.text).toBe(200);
    expect((await api.get(`${base()}/provider`)).body.keys).toEqual(['fresh', 'more']);

    for (const r of [created, got, list, put, patch]) expectNoValues(r.text);
    expect((await api.del(`${base()}/provider`)).status).toBe(204);
    expect((await api.get(`${base()}/provider`)).status).toBe(404);
    expect((await api.get(base())).body.items).toEqual([]);
  });

  it("hides values kept in kubectl's last-applied annotation", async () => {
    const applied = await kubectl(
      ['apply', '-n', ns, '-f', '-'],
      `apiVersion: v1\nkind: Secret\nmetadata: {name: applied, annotations: {team: red}}\nstringData: {key: ${VALUES.applied}}\n`,
    );
    expect(applied.code, applied.stderr).toBe(0);
    await svc.cache.waitFor(CoreKinds.Secret, ns, 'applied', (o) => !!o, { timeoutMs: 5000 });
    const got = await api.get(`${base()}/applied`);
    expect(got.body.metadata.annotations).toEqual({ team: 'red' });
    const list = await api.get(base());
    // PUT must not carry the old values forward in the annotation either.
    await api.put(`${base()}/applied`, { stringData: { key: 'x' } });
    const after = await kubectl(['get', 'secret', 'applied', '-n', ns, '-o', 'json']);
    expect(after.stdout).not.toContain(VALUES.applied);
    for (const r of [got, list]) expectNoValues(r.text);
  });

  it('API key secrets are managed by /v1/api-keys only', async () => {
    const key = await api.post('/v1/api-keys', { name: 'hidden' });
    expect(key.status, key.text).toBe(201);
    const pk = key.body.public_key as string;
    expect((await api.get(base())).body.items.map((s: any) => s.metadata.name)).not.toContain(pk);
    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', { stringData: { is_active: 'true' } }],
      ['PATCH', { stringData: { is_active: 'true' } }],
      ['DELETE', undefined],
    ] as const) {
      const res = await api.call(method, `${base()}/${pk}`, body);
      expect(res.status, method).toBe(404);
    }
    const forged = await api.post(base(), { name: 'forged', type: 'berth.dev/api-key', stringData: {} });
    expect(forged.status).toBe(400);
    expect(forged.body.error.message).toContain('/v1/api-keys');
    expect((await api.get('/v1/api-keys')).body.items[0]).toMatchObject({ public_key: pk, is_active: true });
  });

  it('maps errors: 409, 400, 422 with causes', async () => {
    expect((await api.post(base(), { name: 'dup', stringData: { a: 'b' } })).status).toBe(201);
    expect((await api.post(base(), { name: 'dup', stringData: { a: 'b' } })).status).toBe(409);
    expect((await api.post(base(), { stringData: { a: 'b' } })).status).toBe(400);
    expect((await api.post(base(), { name: 'x', data: { a: 5 } })).status).toBe(400);
    const badKey = await api.post(base(), { name: 'badkey', stringData: { 'no spaces allowed': 'v' } });
    expect(badKey.status).toBe(422);
    expect(badKey.body.error.details.causes[0].field).toContain('data');
    expect(badKey.text).not.toContain('no spaces allowed": "v');
  });

  it('no value written in this file appears in the service log (trace level, headers included)', () => {
    const text = svc.logs();
    expect(text).toContain('"msg":"request"');
    expectNoValues(text);
  });
});
