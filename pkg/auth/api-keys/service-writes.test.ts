import type { V1Secret } from '@kubernetes/client-node';
import bcrypt from 'bcryptjs';
import { describe, expect, it } from 'vitest';
import { API_KEY_SECRET_TYPE } from '../../api/group.ts';
import { FakeClient } from '../../kube/client/fake.ts';
import { KubeError } from '../../kube/errors.ts';
import { CoreKinds, refKey } from '../../kube/kinds.ts';
import { ApiKeyError } from '../errors.ts';
import { generateKeyPair, newApiKeySecret } from './format.ts';
import type { SecretSource } from './secret-cache.ts';
import { ApiKeyService } from './service.ts';

const NS = 'tenant-a';
const SECRETS = refKey(CoreKinds.Secret);

/**
 * The fake API server plus an informer-like source fed by its change events. The fake keeps
 * `stringData` as written; the source folds it into `data` as the API server does (later `data`
 * patches win, since the fake's `stringData` is the creation's).
 */
function cluster() {
  const client = new FakeClient();
  const secrets = new Map<string, V1Secret>();
  const listeners = new Set<() => void>();
  const state = { lagging: false };
  client.onChange((type, ref, obj) => {
    if (refKey(ref) !== SECRETS || state.lagging) return;
    const s = obj as V1Secret;
    const name = s.metadata?.name ?? '';
    if (type === 'DELETED') secrets.delete(name);
    else secrets.set(name, { ...s, stringData: undefined, data: { ...base64(s.stringData), ...s.data } });
    for (const l of listeners) l();
  });
  const source: SecretSource = {
    list: () => [...secrets.values()],
    get: (name) => secrets.get(name),
    onChange: (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
  };
  const svc = new ApiKeyService({
    client,
    namespace: NS,
    source,
    bcryptCost: 4,
    lastUsedFlushMs: 0,
    readYourWritesMs: 200,
  });
  return { client, svc, secrets, state };
}

const decoded = (s: V1Secret | undefined, key: string) =>
  Buffer.from(s?.data?.[key] ?? '', 'base64').toString();

describe('ApiKeyService writes through the client', () => {
  it('create stores one API key Secret with only the bcrypt hash, usable at once', async () => {
    const { client, svc, secrets } = cluster();
    const key = await svc.create({
      name: 'ci',
      createdBy: { user: 'alice', groups: ['team-a', 'system:masters'] },
    });
    expect(client.actions).toEqual([{ verb: 'create', ref: SECRETS, namespace: NS, name: key.public_key }]);
    expect(svc.stats.kubeRequests).toBe(1);
    const stored = secrets.get(key.public_key);
    expect(stored?.type).toBe(API_KEY_SECRET_TYPE);
    expect(JSON.stringify(stored)).not.toContain(key.secret_key);
    expect(bcrypt.compareSync(key.secret_key, decoded(stored, 'secret_hash'))).toBe(true);
    expect(key.id).toBe(stored?.metadata?.uid);
    const verified = await svc.verify(key.public_key, key.secret_key);
    expect(verified.ok).toBe(true);
    // The key acts as its creator; a reserved system: group never survives the round trip.
    expect(verified.ok && verified.record.actsAs).toEqual({ user: 'alice', groups: ['team-a'] });
    expect(stored?.metadata?.annotations?.['berth.dev/created-by']).toBe('alice');
    expect(svc.stats.kubeRequests).toBe(1);
  });

  it('revoke patches the Secret inactive, keeps it, and is idempotent', async () => {
    const { client, svc, secrets } = cluster();
    const key = await svc.create({ name: 'to revoke' });
    await svc.revoke(key.public_key);
    expect(await svc.verify(key.public_key, key.secret_key)).toEqual({ ok: false, reason: 'revoked' });
    expect(decoded(secrets.get(key.public_key), 'is_active')).toBe('false');
    expect(decoded(secrets.get(key.public_key), 'revoked_at')).toMatch(/^\d{4}-/);
    await svc.revoke(key.public_key);
    expect(client.actions.map((a) => a.verb)).toEqual(['create', 'patch', 'patch']);
    expect(svc.list().items[0]?.is_active).toBe(false);
  });

  it('revoke asks the API server for a key its cache has not seen yet (another replica made it)', async () => {
    const { client, svc, state } = cluster();
    const { publicKey } = generateKeyPair();
    state.lagging = true;
    client.seed<V1Secret>(CoreKinds.Secret, apiKeySecret(publicKey));
    await svc.revoke(publicKey);
    expect(client.actions.map((a) => a.verb)).toEqual(['patch']);
    expect(svc.stats.kubeRequests).toBe(2); // the live read and the patch
  });

  it('revoke answers 404 for unknown keys and for Secrets that are not API keys, writing nothing', async () => {
    const { client, svc } = cluster();
    const { publicKey } = generateKeyPair();
    client.seed<V1Secret>(CoreKinds.Secret, { ...apiKeySecret(publicKey), type: 'Opaque' });
    for (const pk of [publicKey, generateKeyPair().publicKey, 'not-a-key'])
      await expect(svc.revoke(pk)).rejects.toMatchObject({ status: 404, code: 'not_found' });
    await expect(svc.revoke('not-a-key')).rejects.toBeInstanceOf(ApiKeyError);
    expect(client.actions).toEqual([]);
  });

  it("passes the API server's failure on as a KubeError", async () => {
    const { client, svc } = cluster();
    client.failNext('create', new KubeError(403, 'Forbidden', 'secrets is forbidden'));
    await expect(svc.create({ name: 'x' })).rejects.toMatchObject({ reason: 'Forbidden', code: 403 });
  });
});

function apiKeySecret(publicKey: string): V1Secret {
  const s = newApiKeySecret({
    namespace: NS,
    name: 'peer',
    publicKey,
    secretHash: bcrypt.hashSync('x', 4),
    createdAt: new Date().toISOString(),
    expiresAt: null,
  });
  return { ...s, stringData: undefined, data: base64(s.stringData) };
}

const base64 = (values: Record<string, string> = {}) =>
  Object.fromEntries(Object.entries(values).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));

describe('keys made by keys (lineage)', () => {
  const inHours = (h: number) => new Date(Date.now() + h * 3_600_000).toISOString();

  it("caps a child's expiry at its parent's and records the parent on the child's Secret", async () => {
    const { svc, secrets } = cluster();
    const parent = await svc.create({ name: 'parent', expiresAt: inHours(1) });
    const forever = await svc.create({ name: 'child', parentKey: parent.public_key });
    expect(forever.expires_at).toBe(parent.expires_at);
    const later = await svc.create({ name: 'child', expiresAt: inHours(48), parentKey: parent.public_key });
    expect(later.expires_at).toBe(parent.expires_at);
    const sooner = await svc.create({ name: 'child', expiresAt: inHours(0.5), parentKey: parent.public_key });
    // An earlier expiry than the parent's is kept as asked.
    expect(Math.abs(Date.parse(sooner.expires_at ?? '') - Date.now() - 1_800_000)).toBeLessThan(10_000);
    // A grandchild is capped by the earliest expiry up the chain.
    const grandchild = await svc.create({ name: 'g', expiresAt: inHours(10), parentKey: sooner.public_key });
    expect(grandchild.expires_at).toBe(sooner.expires_at);
    expect(secrets.get(forever.public_key)?.metadata?.labels?.['berth.dev/parent-key']).toBe(
      parent.public_key,
    );
    expect(secrets.get(parent.public_key)?.metadata?.labels?.['berth.dev/parent-key']).toBeUndefined();
  });

  it('a revoked, expired or deleted parent takes every descendant with it, cached verifications included', async () => {
    const { client, svc, secrets } = cluster();
    const parent = await svc.create({ name: 'parent' });
    const child = await svc.create({ name: 'child', parentKey: parent.public_key });
    const grandchild = await svc.create({ name: 'g', parentKey: child.public_key });
    for (const k of [child, grandchild]) expect((await svc.verify(k.public_key, k.secret_key)).ok).toBe(true);
    await svc.revoke(parent.public_key);
    for (const k of [child, grandchild])
      expect(await svc.verify(k.public_key, k.secret_key)).toEqual({ ok: false, reason: 'parent_inactive' });
    const listed = svc.list().items.filter((i) => i.public_key !== parent.public_key);
    expect(listed.map((i) => i.is_active)).toEqual([false, false]);

    // Deleted rather than revoked (kubectl delete secret): the same.
    const p2 = await svc.create({ name: 'p2' });
    const c2 = await svc.create({ name: 'c2', parentKey: p2.public_key });
    expect((await svc.verify(c2.public_key, c2.secret_key)).ok).toBe(true);
    await client.delete(CoreKinds.Secret, { namespace: NS, name: p2.public_key });
    expect(secrets.has(p2.public_key)).toBe(false);
    expect(await svc.verify(c2.public_key, c2.secret_key)).toEqual({ ok: false, reason: 'parent_inactive' });
  });

  it('a child of a parent past its expiry stops working when the parent does', async () => {
    let now = Date.now();
    const { client, secrets } = cluster();
    const svc = new ApiKeyService({
      client,
      namespace: NS,
      source: { list: () => [...secrets.values()], get: (n) => secrets.get(n) },
      bcryptCost: 4,
      lastUsedFlushMs: 0,
      readYourWritesMs: 200,
      now: () => now,
    });
    const parent = await svc.create({ name: 'p', expiresAt: new Date(now + 60_000).toISOString() });
    const child = await svc.create({ name: 'c', parentKey: parent.public_key });
    expect((await svc.verify(child.public_key, child.secret_key)).ok).toBe(true);
    now += 61_000;
    expect((await svc.verify(child.public_key, child.secret_key)).ok).toBe(false);
  });

  it('refuses a parent label that names no key, and a loop of parents (hand-edited Secrets): fail closed', async () => {
    const { svc, secrets } = cluster();
    const a = await svc.create({ name: 'a' });
    const b = await svc.create({ name: 'b', parentKey: a.public_key });
    const edit = (pk: string, parent: string) => {
      const s = secrets.get(pk) as V1Secret;
      secrets.set(pk, { ...s, metadata: { ...s.metadata, labels: { 'berth.dev/parent-key': parent } } });
    };
    edit(a.public_key, b.public_key); // a ← b ← a …
    expect(await svc.verify(b.public_key, b.secret_key)).toEqual({ ok: false, reason: 'parent_inactive' });
    edit(b.public_key, 'not-a-key');
    expect(await svc.verify(b.public_key, b.secret_key)).toEqual({ ok: false, reason: 'parent_inactive' });
  });
});
