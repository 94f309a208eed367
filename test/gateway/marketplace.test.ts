/**
 * Marketplace sources on the real control plane (issue 13): every endpoint under both prefixes,
 * rules 1–3 and 8, the missing map, identities (JWT user, group, API key, open mode), concurrent
 * edits. The API runs with the tenant ServiceAccount of manifests/ plus the impersonation component;
 * the users hold the manifests' Roles.
 */
import type { V1ConfigMap, V1Secret } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applySource, readMap } from '../../pkg/gateway/marketplace/store.ts';
import { isConflict, isNotFound } from '../../pkg/kube/client/helpers.ts';
import { createClient } from '../../pkg/kube/client/index.ts';
import { CoreKinds, type KindRef, Scheme } from '../../pkg/kube/kinds.ts';
import { kubeConfig } from '../support/kube.ts';
import { startWorld, userTokens, type World } from './marketplace-support.ts';
import { client } from './support.ts';

let w: World;
let editor: ReturnType<World['as']>;
let reader: ReturnType<World['as']>;
let base: string;
const admin = createClient({ kc: kubeConfig(), scheme: new Scheme() });
const CM = CoreKinds.ConfigMap as KindRef<V1ConfigMap>;
const SECRET = CoreKinds.Secret as KindRef<V1Secret>;

beforeAll(async () => {
  w = await startWorld('mp-crud');
  const t = await userTokens(w);
  editor = w.as(t.editor);
  reader = w.as(t.reader);
  base = `/api/v1/namespaces/${w.ns}/marketplace-sources`;
}, 120_000);
afterAll(() => w?.close());

const map = () => admin.get(CM, { namespace: w.ns, name: 'marketplace-sources' });
const secret = (name: string) => admin.get(SECRET, { namespace: w.ns, name });
const gone = (p: Promise<unknown>) => p.then(() => false, isNotFound);
const secretValue = async (name: string) =>
  Buffer.from((await secret(name)).data?.value ?? '', 'base64').toString();

describe('a missing marketplace-sources map', () => {
  it('lists as empty, is not created for a reader, and is created for an editor', async () => {
    const list = await reader.get(base);
    expect(list.status, list.text).toBe(200);
    expect(list.body).toEqual({ items: [] });
    const refused = await reader.post(base, { name: 'nope', url: `${w.server.url}/public.json` });
    expect(refused.status, refused.text).toBe(403);
    expect(refused.body.error.message).toContain('patch configmaps/marketplace-sources');
    expect(await gone(map())).toBe(true);

    const made = await editor.post(base, { name: 'public', url: `${w.server.url}/public.json` });
    expect(made.status, made.text).toBe(201);
    expect(made.body).toEqual({ name: 'public', url: `${w.server.url}/public.json`, displayName: 'public' });
    const cm = await map();
    expect(JSON.parse(cm.data?.public ?? '')).toEqual({ url: `${w.server.url}/public.json` });
    // The key is the source's own field manager's, by apply; the map itself was created by the API.
    const managers = (cm.metadata?.managedFields ?? []).map((f) => `${f.manager}/${f.operation}`);
    expect(managers).toContain('berth-marketplace-public/Apply');
  });
});

describe('CRUD under both prefixes', () => {
  it('creates, reads, updates and deletes a source', async () => {
    for (const prefix of ['/api/v1', '/v1']) {
      const path = `${prefix}/namespaces/${w.ns}/marketplace-sources`;
      const name = `crud${prefix.replaceAll('/', '-')}`;
      const url = `${w.server.url}/other.json`;
      const made = await editor.post(path, { name, url, displayName: 'Other' });
      expect(made.status, made.text).toBe(201);
      expect(made.body).toEqual({ name, url, displayName: 'Other' });
      expect((await editor.post(path, { name, url })).status).toBe(409);
      expect((await reader.get(`${path}/${name}`)).body).toEqual(made.body);
      expect((await reader.get(path)).body.items.map((s: { name: string }) => s.name)).toContain(name);
      const patched = await editor.patch(`${path}/${name}`, { displayName: 'Renamed' });
      expect(patched.status, patched.text).toBe(200);
      expect(patched.body).toEqual({ name, url, displayName: 'Renamed' });
      expect((await editor.patch(`${path}/${name}`, { displayName: '' })).body.displayName).toBe(name);
      expect((await editor.del(`${path}/${name}`)).status).toBe(204);
      expect((await editor.get(`${path}/${name}`)).status).toBe(404);
      expect((await editor.del(`${path}/${name}`)).status).toBe(404);
      expect((await editor.patch(`${path}/${name}`, { displayName: 'x' })).status).toBe(404);
    }
  });

  it('refuses writes by a reader (403) and answers the permissions probe per user', async () => {
    const name = 'public';
    for (const [method, path, body] of [
      ['PATCH', `${base}/${name}`, { displayName: 'hijacked' }],
      ['DELETE', `${base}/${name}`],
      ['POST', base, { name: 'r', url: `${w.server.url}/public.json` }],
    ] as const) {
      const res = await reader.call(method, path, body);
      expect(res.status, `${method} ${path}: ${res.text}`).toBe(403);
      expect(res.body.error.message).toContain(`user "${w.users.reader}"`);
    }
    expect((await reader.get(`${base}/permissions`)).body).toEqual({ canEdit: false });
    expect((await editor.get(`${base}/permissions`)).body).toEqual({ canEdit: true });
    expect((await editor.get(`/v1/namespaces/${w.ns}/marketplace-sources/permissions`)).body).toEqual({
      canEdit: true,
    });
    // Fail-closed: a token naming no usable user may do nothing, and the probe says so.
    const nobody = w.as(await w.token({ roles: [] }));
    expect((await nobody.get(`${base}/permissions`)).body).toEqual({ canEdit: false });
    expect((await nobody.get(base)).status).toBe(403);
    const reserved = w.as(await w.token({ sub: 'system:admin' }));
    expect((await reserved.get(base)).status).toBe(403);
  });

  it('refuses another namespace (403) and bad input (400/422)', async () => {
    for (const path of [
      '/api/v1/namespaces/default/marketplace-sources',
      '/v1/namespaces/default/marketplace-items',
      '/api/v1/namespaces/default/marketplace-sources/permissions',
    ])
      expect((await editor.get(path)).status, path).toBe(403);
    const url = `${w.server.url}/public.json`;
    const cases: Array<[unknown, number, string?]> = [
      [{ url }, 400],
      [{ name: '', url }, 400],
      [{ name: 'x' }, 400],
      [{ name: 'x', url: '' }, 400],
      [{ name: 'x', url, extra: 1 }, 400],
      [{ name: 'x', url, auth: { scheme: 'bearer' } }, 400],
      [{ name: 'x', url, auth: { scheme: 'digest', credential: 'c' } }, 400],
      [{ name: 'bad name!', url }, 422, 'invalid_name'],
      [{ name: 'permissions', url }, 422, 'invalid_name'],
      [{ name: 'Upper_Case', url, auth: { scheme: 'bearer', credential: 'c' } }, 422, 'invalid_name'],
      [{ name: 'x', url: 'http://example.com/m.json' }, 422, 'invalid_url'],
      [{ name: 'x', url: 'not a url' }, 422, 'invalid_url'],
      [{ name: 'x', url: '/relative.json' }, 422, 'invalid_url'],
      [{ name: 'x', url: 'https://user:pw@example.com/m.json' }, 422, 'invalid_url'],
    ];
    for (const [body, status, code] of cases) {
      const res = await editor.post(base, body);
      expect(res.status, `${JSON.stringify(body)}: ${res.text}`).toBe(status);
      if (code) expect(res.body.error.code).toBe(code);
    }
    expect((await editor.patch(`${base}/public`, { url: 'ftp://x/y' })).status).toBe(422);
    expect((await editor.patch(`${base}/public`, { name: 'renamed' })).status).toBe(400);
    // An upper-case name is a valid ConfigMap key: fine for a public source.
    const upper = await editor.post(base, { name: 'Upper_Case.v2', url });
    expect(upper.status, upper.text).toBe(201);
  });
});

describe('credentials (rules 2–4)', () => {
  it('test-fetches a credential before saving and keeps it only in its Secret', async () => {
    const [bearer, basic] = w.credentials as [string, string];
    const url = `${w.server.url}/private.json`;
    const wrong = await editor.post(base, {
      name: 'private',
      url,
      auth: { scheme: 'bearer', credential: 'wrong' },
    });
    expect(wrong.status, wrong.text).toBe(400);
    expect(wrong.body.error.code).toBe('credential_rejected');
    expect(await gone(secret('marketplace-source-private-auth'))).toBe(true);
    expect((await map()).data?.private).toBeUndefined();

    const made = await editor.post(base, {
      name: 'private',
      url,
      auth: { scheme: 'bearer', credential: bearer },
    });
    expect(made.status, made.text).toBe(201);
    expect(made.body.auth).toEqual({ scheme: 'bearer', secretRef: 'marketplace-source-private-auth' });
    expect(await secretValue('marketplace-source-private-auth')).toBe(bearer);
    expect((await map()).data?.private).not.toContain(bearer);
    const basicSource = await editor.post(base, {
      name: 'basic',
      url: `${w.server.url}/basic.json`,
      auth: { scheme: 'basic', credential: basic },
    });
    expect(basicSource.status, basicSource.text).toBe(201);
    // The exact headers of rule 4 reached the source.
    const auths = w.server.seen.map((s) => s.authorization);
    expect(auths).toContain(`Bearer ${bearer}`);
    expect(auths).toContain(`Basic ${Buffer.from(`:${basic}`).toString('base64')}`);
  });

  it('needs the credential again for a new url, never carrying the old Secret there', async () => {
    const [bearer] = w.credentials as [string];
    const before = w.server.count('/other.json');
    const moved = await editor.patch(`${base}/private`, { url: `${w.server.url}/other.json` });
    expect(moved.status, moved.text).toBe(400);
    expect(moved.body.error.code).toBe('credential_required');
    expect(w.server.count('/other.json')).toBe(before);
    const noCredential = await editor.patch(`${base}/private`, { auth: { scheme: 'basic' } });
    expect(noCredential.status).toBe(400);

    const rotated = `mp-rotated-${crypto.randomUUID()}`;
    w.credentials.push(rotated);
    w.server.tokens.bearer = rotated;
    const rejected = await editor.patch(`${base}/private`, {
      auth: { scheme: 'bearer', credential: bearer },
    });
    expect(rejected.status).toBe(400);
    const ok = await editor.patch(`${base}/private`, { auth: { scheme: 'bearer', credential: rotated } });
    expect(ok.status, ok.text).toBe(200);
    expect(await secretValue('marketplace-source-private-auth')).toBe(rotated);

    const publicAgain = await editor.patch(`${base}/basic`, {
      auth: null,
      url: `${w.server.url}/public.json`,
    });
    expect(publicAgain.status, publicAgain.text).toBe(200);
    expect(publicAgain.body.auth).toBeUndefined();
    expect(await gone(secret('marketplace-source-basic-auth'))).toBe(true);
  });

  it('deletes the credential Secret with its source', async () => {
    const made = await editor.post(base, {
      name: 'doomed',
      url: `${w.server.url}/private.json`,
      auth: { scheme: 'bearer', credential: w.server.tokens.bearer },
    });
    expect(made.status, made.text).toBe(201);
    expect(await gone(secret('marketplace-source-doomed-auth'))).toBe(false);
    expect((await editor.del(`${base}/doomed`)).status).toBe(204);
    expect(await gone(secret('marketplace-source-doomed-auth'))).toBe(true);
  });
});

describe('identities', () => {
  it('an API key acts as the user who created it; open mode acts as the service account', async () => {
    const t = await userTokens(w);
    const keyOf = async (jwt: string) => (await w.as(jwt).post('/v1/api-keys', { name: 'k' })).body;
    const [ek, rk] = [await keyOf(t.editor), await keyOf(t.reader)];
    const withKey = (k: { public_key: string; secret_key: string }) =>
      client(w.api.url, { 'x-api-key': `${k.public_key}:${k.secret_key}` });
    expect((await withKey(ek).get(`${base}/permissions`)).body).toEqual({ canEdit: true });
    expect((await withKey(rk).get(`${base}/permissions`)).body).toEqual({ canEdit: false });
    const res = await withKey(rk).post(base, { name: 'by-key', url: `${w.server.url}/public.json` });
    expect(res.status).toBe(403);
    expect(
      (await withKey(ek).post(base, { name: 'by-key', url: `${w.server.url}/public.json` })).status,
    ).toBe(201);
    const open = client(w.open.url);
    expect((await open.get(`${base}/permissions`)).body).toEqual({ canEdit: true });
    expect((await open.patch(`${base}/by-key`, { displayName: 'as the account' })).status).toBe(200);
  });
});

describe('concurrent edits', () => {
  it('of different sources never clobber each other, nor a seeded key', async () => {
    // A key of the seeder (its own field manager), as the controller would have applied it.
    await admin.apply(
      CM,
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'marketplace-sources', namespace: w.ns },
        data: { seeded: JSON.stringify({ url: 'https://catalog.example.com/m.json' }) },
      },
      { fieldManager: 'helm-marketplace-seeder', force: false },
    );
    const names = Array.from({ length: 6 }, (_, i) => `parallel-${i}`);
    const made = await Promise.all(
      names.map((name) => editor.post(base, { name, url: `${w.server.url}/public.json` })),
    );
    expect(made.map((r) => r.status)).toEqual(names.map(() => 201));
    const patched = await Promise.all(
      names.map((name) => editor.patch(`${base}/${name}`, { displayName: `D ${name}` })),
    );
    expect(patched.map((r) => r.status)).toEqual(names.map(() => 200));
    const data = (await map()).data ?? {};
    for (const name of names) expect(JSON.parse(data[name] ?? '{}').displayName).toBe(`D ${name}`);
    expect(JSON.parse(data.seeded ?? '{}').url).toBe('https://catalog.example.com/m.json');
    // Deleting sources concurrently removes exactly those keys.
    const deleted = await Promise.all(names.map((name) => editor.del(`${base}/${name}`)));
    expect(deleted.map((r) => r.status)).toEqual(names.map(() => 204));
    const left = Object.keys((await map()).data ?? {});
    expect(left).toContain('seeded');
    for (const name of names) expect(left).not.toContain(name);
  });

  it('makes each write conditional on the map it read: a stale apply is a 409, then retried', async () => {
    const read = await readMap(admin, w.ns);
    await applySource(admin, w.ns, 'first', { url: 'https://a.example.com/m.json' }, read.resourceVersion);
    const stale = await applySource(
      admin,
      w.ns,
      'second',
      { url: 'https://b.example.com/m.json' },
      read.resourceVersion,
    ).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(isConflict(stale)).toBe(true);
    expect((await map()).data?.second).toBeUndefined();
  });
});
