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
