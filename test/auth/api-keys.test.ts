import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import bcrypt from 'bcryptjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY_SECRET_TYPE } from '../../pkg/api/group.ts';
import type { ApiKeyService } from '../../pkg/auth/index.ts';
import { createNamespace, kubeConfig } from '../support/kube.ts';
import { basic, captureLogs, createKey, serveApi, startKeyService, type TestApi, until } from './support.ts';

const logs = captureLogs();
const core = kubeConfig('admin').makeApiClient(CoreV1Api);
const stops: Array<() => Promise<void>> = [];
let nsA: string;
let nsB: string;
let svcA: ApiKeyService;
let apiA: TestApi;
let apiB: TestApi;
let openA: TestApi;

const whoami = (api: TestApi, authorization: string) =>
  fetch(`${api.url}/v1/whoami`, { headers: { authorization } }).then((r) => r.status);

beforeAll(async () => {
  [nsA, nsB] = await Promise.all([createNamespace('auth-keys-a'), createNamespace('auth-keys-b')]);
  const [a, b] = await Promise.all([startKeyService(nsA, logs.logger), startKeyService(nsB, logs.logger)]);
  svcA = a.service;
  stops.push(a.stop, b.stop);
  apiA = await serveApi({ mode: 'basic', service: a.service, logger: logs.logger });
  apiB = await serveApi({ mode: 'basic', service: b.service, logger: logs.logger });
  openA = await serveApi({ mode: 'open', service: a.service, logger: logs.logger });
  stops.push(apiA.stop, apiB.stop, openA.stop);
});

afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
});

describe('API keys on the real API server', () => {
  it('creates a key (secret shown once), stores only its bcrypt hash, and lists it', async () => {
    const res = await fetch(`${openA.url}/v1/api-keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'ci pipeline', expires_at: '2099-01-01T00:00:00Z' }),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const key = (await res.json()) as Record<string, string>;
    expect(Object.keys(key).sort()).toEqual([
      'created_at',
      'expires_at',
      'id',
      'name',
      'public_key',
      'secret_key',
    ]);
    expect(key.public_key).toMatch(/^pk-svc-[a-z0-9]+$/);
    expect(key.secret_key).toMatch(/^sk-svc-/);
    expect(key.expires_at).toBe('2099-01-01T00:00:00.000Z');

    const secret = await core.readNamespacedSecret({ name: key.public_key as string, namespace: nsA });
    expect(secret.type).toBe(API_KEY_SECRET_TYPE);
    const raw = JSON.stringify(secret);
    expect(raw).not.toContain(key.secret_key);
    expect(raw).not.toContain(Buffer.from(key.secret_key as string).toString('base64'));
    const hash = Buffer.from(secret.data?.secret_hash ?? '', 'base64').toString();
    expect(bcrypt.compareSync(key.secret_key as string, hash)).toBe(true);

    const list = await fetch(`${openA.url}/v1/api-keys`).then((r) => r.json());
    const item = list.items.find((i: { public_key: string }) => i.public_key === key.public_key);
    expect(list.count).toBe(list.items.length);
    expect(item).toEqual({
      id: key.id,
      name: 'ci pipeline',
      public_key: key.public_key,
      created_at: key.created_at,
      last_used_at: null,
      expires_at: key.expires_at,
      is_active: true,
    });
    expect(JSON.stringify(list)).not.toContain('sk-svc-');
    // Usable at once: create waits for its own write to reach the cache.
    expect(await whoami(apiA, basic(key.public_key as string, key.secret_key as string))).toBe(200);
  });

  it('answers bad input with a clear 4xx and the error envelope', async () => {
    const post = (body: string, type = 'application/json') =>
      fetch(`${openA.url}/v1/api-keys`, { method: 'POST', headers: { 'content-type': type }, body });
    const cases: Array<[string, number, RegExp]> = [
      ['{}', 400, /name/],
      ['{"name":"   "}', 400, /name must not be empty/],
      ['{"name":"x","expires_at":"next tuesday"}', 400, /ISO 8601/],
      ['{"name":"x","expiresAt":"2099-01-01T00:00:00Z"}', 400, /expiresAt/],
      ['{"name":"x","expires_at":"2001-01-01T00:00:00Z"}', 422, /not in the future/],
      ['{"name": ', 400, /JSON/i],
    ];
    for (const [body, status, message] of cases) {
      const res = await post(body);
      const json = (await res.json()) as { error: { code: string; message: string; requestId?: string } };
      expect(res.status, body).toBe(status);
      expect(json.error.message, body).toMatch(message);
      expect(json.error.requestId, body).toBeTruthy();
    }
    const unknown = await fetch(`${openA.url}/v1/api-keys/pk-svc-00000000deadbeef`, { method: 'DELETE' });
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error.code).toBe('not_found');
    const garbage = await fetch(`${openA.url}/v1/api-keys/not-a-key`, { method: 'DELETE' });
    expect(garbage.status).toBe(404);
  });

  it('serves verification from the caches: no API call and no bcrypt after the first success', async () => {
    const key = await createKey(openA, { name: 'hot path' });
    const auth = basic(key.public_key, key.secret_key);
    const before = { ...svcA.stats };
    expect(await whoami(apiA, auth)).toBe(200);
    const statuses = await Promise.all(Array.from({ length: 50 }, () => whoami(apiA, auth)));
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect(svcA.stats.bcryptCompares - before.bcryptCompares).toBe(1);
    expect(svcA.stats.kubeRequests - before.kubeRequests).toBe(0);
    expect(svcA.stats.cacheHits - before.cacheHits).toBe(50);
  });

  it('writes last-used times in batches, one write per key per batch', async () => {
    const key = await createKey(openA, { name: 'batched' });
    const auth = basic(key.public_key, key.secret_key);
    await svcA.lastUsed.flush();
    const writes = svcA.lastUsed.stats.writes;
    for (let i = 0; i < 20; i++) expect(await whoami(apiA, auth)).toBe(200);
    const read = () => core.readNamespacedSecret({ name: key.public_key, namespace: nsA });
    expect((await read()).data?.last_used_at ?? '').toBe('');
    await svcA.lastUsed.flush();
    expect(svcA.lastUsed.stats.writes - writes).toBe(1);
    const stored = Buffer.from((await read()).data?.last_used_at ?? '', 'base64').toString();
    expect(Date.now() - Date.parse(stored)).toBeLessThan(60_000);
    const listed = await fetch(`${openA.url}/v1/api-keys`).then((r) => r.json());
    const item = listed.items.find((i: { public_key: string }) => i.public_key === key.public_key);
    expect(item.last_used_at).toBe(stored);
  });

  it('revoke: 204, the key stops working at once, the record stays for audit', async () => {
    const key = await createKey(openA, { name: 'to revoke' });
    const auth = basic(key.public_key, key.secret_key);
    expect(await whoami(apiA, auth)).toBe(200);
    const del = await fetch(`${openA.url}/v1/api-keys/${key.public_key}`, { method: 'DELETE' });
    expect(del.status).toBe(204);
    expect(await whoami(apiA, auth)).toBe(401);
    const list = await fetch(`${openA.url}/v1/api-keys`).then((r) => r.json());
    expect(list.items.find((i: { public_key: string }) => i.public_key === key.public_key).is_active).toBe(
      false,
    );
    expect((await core.readNamespacedSecret({ name: key.public_key, namespace: nsA })).type).toBe(
      API_KEY_SECRET_TYPE,
    );
    expect((await fetch(`${openA.url}/v1/api-keys/${key.public_key}`, { method: 'DELETE' })).status).toBe(
      204,
    );
  });

  it('a revocation made elsewhere (another replica) takes effect within 1 s', async () => {
    const key = await createKey(openA, { name: 'revoked by a peer' });
    const auth = basic(key.public_key, key.secret_key);
    expect(await whoami(apiA, auth)).toBe(200);
    await core.patchNamespacedSecret(
      {
        name: key.public_key,
        namespace: nsA,
        body: { data: { is_active: Buffer.from('false').toString('base64') } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const elapsed = await until(async () => (await whoami(apiA, auth)) === 401, 2000);
    expect(elapsed).toBeLessThan(1000);
  });

  it('an expired key is refused from the instant it expires', async () => {
    const expiresAt = new Date(Date.now() + 1200).toISOString();
    const key = await createKey(openA, { name: 'short-lived', expires_at: expiresAt });
    const auth = basic(key.public_key, key.secret_key);
    expect(await whoami(apiA, auth)).toBe(200);
    await until(async () => Date.now() > Date.parse(expiresAt), 3000, 50);
    expect(await whoami(apiA, auth)).toBe(401);
    const list = await fetch(`${openA.url}/v1/api-keys`).then((r) => r.json());
    expect(list.items.find((i: { public_key: string }) => i.public_key === key.public_key).is_active).toBe(
      false,
    );
  });

  it('a key of namespace A is refused by the instance of namespace B, and B does not list it', async () => {
    const key = await createKey(openA, { name: 'tenant a only' });
    expect(await whoami(apiA, basic(key.public_key, key.secret_key))).toBe(200);
    expect(await whoami(apiB, basic(key.public_key, key.secret_key))).toBe(401);
    const listB = await fetch(`${apiB.url}/v1/api-keys`, {
      headers: { authorization: basic(key.public_key, key.secret_key) },
    });
    expect(listB.status).toBe(401);
    const revokeB = await fetch(`${apiB.url}/v1/api-keys/${key.public_key}`, {
      method: 'DELETE',
      headers: { authorization: basic(key.public_key, key.secret_key) },
    });
    expect(revokeB.status).toBe(401);
  });

  it('publishes the routes with their schemas in OpenAPI', async () => {
    const doc = await fetch(`${openA.url}/openapi.json`).then((r) => r.json());
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/v1/api-keys', '/v1/api-keys/{public_key}']),
    );
    expect(doc.paths['/v1/api-keys'].post.requestBody.content['application/json'].schema).toBeTruthy();
    expect(doc.components.schemas.ApiKeyCreated.required).toContain('secret_key');
  });

  it('never logs a secret key', () => {
    const text = logs.text();
    expect(text).toContain('API key created');
    expect(text).not.toMatch(/sk-svc-[A-Za-z0-9_-]{8}/);
  });
});
