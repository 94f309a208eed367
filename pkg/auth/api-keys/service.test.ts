import type { V1Secret } from '@kubernetes/client-node';
import bcrypt from 'bcryptjs';
import { describe, expect, it } from 'vitest';
import { FakeClient } from '../../kube/client/fake.ts';
import { generateKeyPair, newApiKeySecret } from './format.ts';
import { ApiKeyService } from './service.ts';
import type { ApiKeyServiceOptions } from './types.ts';

const NS = 'tenant-a';

/** A Secret as the API server returns it: stringData folded into base64 data. */
function stored(opts: { publicKey: string; hash: string; expiresAt?: string; namespace?: string }): V1Secret {
  const s = newApiKeySecret({
    namespace: opts.namespace ?? NS,
    name: 'k',
    publicKey: opts.publicKey,
    secretHash: opts.hash,
    createdAt: new Date().toISOString(),
    expiresAt: opts.expiresAt ?? null,
  });
  const data = Object.fromEntries(
    Object.entries(s.stringData ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
  );
  return { ...s, stringData: undefined, data, metadata: { ...s.metadata, uid: 'uid-1' } };
}

function setup(secrets: V1Secret[], extra: Partial<ApiKeyServiceOptions> = {}) {
  const map = new Map(secrets.map((s) => [s.metadata?.name ?? '', s]));
  const svc = new ApiKeyService({
    client: new FakeClient(),
    namespace: NS,
    source: { list: () => [...map.values()], get: (n) => map.get(n) },
    bcryptCost: 4,
    lastUsedFlushMs: 0,
    ...extra,
  });
  return { svc, map };
}

describe('ApiKeyService.verify', () => {
  it('runs bcrypt once per key pair, then answers from the verified-key cache', async () => {
    const { publicKey, secretKey } = generateKeyPair();
    const { svc } = setup([stored({ publicKey, hash: bcrypt.hashSync(secretKey, 4) })]);
    const results = await Promise.all(Array.from({ length: 20 }, () => svc.verify(publicKey, secretKey)));
    expect(results.every((r) => r.ok)).toBe(true);
    for (let i = 0; i < 100; i++) expect((await svc.verify(publicKey, secretKey)).ok).toBe(true);
    expect(svc.stats.bcryptCompares).toBe(1);
    expect(svc.stats.cacheHits).toBe(100);
    expect(svc.stats.kubeRequests).toBe(0);
  });

  it('refuses a wrong secret, and a repeated wrong secret costs no further bcrypt', async () => {
    const { publicKey, secretKey } = generateKeyPair();
    const wrong = generateKeyPair().secretKey;
    const { svc } = setup([stored({ publicKey, hash: bcrypt.hashSync(secretKey, 4) })]);
    expect(await svc.verify(publicKey, wrong)).toEqual({ ok: false, reason: 'bad_secret' });
    expect(await svc.verify(publicKey, wrong)).toEqual({ ok: false, reason: 'bad_secret' });
    expect(svc.stats.bcryptCompares).toBe(1);
  });

  it('stops accepting a cached key as soon as its Secret says revoked, expired or rehashed', async () => {
    const { publicKey, secretKey } = generateKeyPair();
    const hash = bcrypt.hashSync(secretKey, 4);
    const { svc, map } = setup([stored({ publicKey, hash })]);
    expect((await svc.verify(publicKey, secretKey)).ok).toBe(true);

    const revoked = stored({ publicKey, hash });
    revoked.data = { ...revoked.data, is_active: Buffer.from('false').toString('base64') };
    map.set(publicKey, revoked);
    expect(await svc.verify(publicKey, secretKey)).toEqual({ ok: false, reason: 'revoked' });

    map.set(publicKey, stored({ publicKey, hash, expiresAt: new Date(Date.now() - 1).toISOString() }));
    expect(await svc.verify(publicKey, secretKey)).toEqual({ ok: false, reason: 'expired' });

    map.set(publicKey, stored({ publicKey, hash: bcrypt.hashSync(generateKeyPair().secretKey, 4) }));
    expect(await svc.verify(publicKey, secretKey)).toEqual({ ok: false, reason: 'bad_secret' });
  });

  it('ignores Secrets of other namespaces and unknown or malformed keys', async () => {
    const { publicKey, secretKey } = generateKeyPair();
    const { svc } = setup([
      stored({ publicKey, hash: bcrypt.hashSync(secretKey, 4), namespace: 'tenant-b' }),
    ]);
    expect(await svc.verify(publicKey, secretKey)).toEqual({ ok: false, reason: 'unknown' });
    expect(await svc.verify('pk-svc-0123456789abcdef', secretKey)).toEqual({ ok: false, reason: 'unknown' });
    expect(await svc.verify('admin', 'password')).toEqual({ ok: false, reason: 'malformed' });
    expect(svc.stats.bcryptCompares).toBe(0);
  });

  it('records last use in memory until the batch is flushed', async () => {
    const { publicKey, secretKey } = generateKeyPair();
    const { svc } = setup([stored({ publicKey, hash: bcrypt.hashSync(secretKey, 4) })]);
    await svc.verify(publicKey, secretKey);
    expect(svc.list().items[0]?.last_used_at).toMatch(/^\d{4}-/);
    expect(svc.lastUsed.stats.flushes).toBe(0);
  });
});

describe('ApiKeyService.verify under a stream of wrong secrets', () => {
  it('refuses without bcrypt once the key has used its budget, while the cached right secret still passes', async () => {
    const { publicKey, secretKey } = generateKeyPair();
    const { svc } = setup([stored({ publicKey, hash: bcrypt.hashSync(secretKey, 4) })], {
      bcryptLimits: { perKeyBurst: 3 },
    });
    expect((await svc.verify(publicKey, secretKey)).ok).toBe(true);
    const wrong = () => svc.verify(publicKey, generateKeyPair().secretKey);
    const answers = await Promise.all(Array.from({ length: 40 }, wrong));
    expect(answers.filter((a) => !a.ok && a.reason === 'bad_secret')).toHaveLength(3);
    expect(answers.filter((a) => !a.ok && a.reason === 'rate_limited')).toHaveLength(37);
    expect(answers.find((a) => !a.ok && a.reason === 'rate_limited')).toMatchObject({
      scope: 'key',
      retryAfterSec: expect.any(Number),
    });
    expect(svc.stats.bcryptCompares).toBe(4); // the right secret's one, and three wrong ones
    expect(svc.stats.rateLimited).toBe(37);
    expect((await svc.verify(publicKey, secretKey)).ok).toBe(true);
    await svc.stop();
  });
});
