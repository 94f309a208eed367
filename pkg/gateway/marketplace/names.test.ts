import { describe, expect, it } from 'vitest';
import { credentialNameProblem, fieldManagerFor, nameProblem } from './names.ts';
import { authorizationHeader } from './source-fetch.ts';
import { TtlCache } from './ttl-cache.ts';

describe('source names', () => {
  it('follow ConfigMap key rules and leave the probe path free', () => {
    for (const ok of ['a', 'Catalog_1.v2', 'x-y', 'a'.repeat(253)])
      expect(nameProblem(ok), ok).toBeUndefined();
    for (const bad of ['', '.', '..', 'a b', 'a/b', 'ü', 'permissions', 'a'.repeat(254)])
      expect(nameProblem(bad), bad).toBeDefined();
  });

  it('with a credential, must also fit the Secret name marketplace-source-<name>-auth', () => {
    expect(credentialNameProblem('catalog.v2')).toBeUndefined();
    expect(credentialNameProblem('Catalog')).toBeDefined();
    expect(credentialNameProblem('a_b')).toBeDefined();
    expect(credentialNameProblem('a'.repeat(230))).toBeDefined();
  });

  it('get a field manager each, at most 128 characters', () => {
    expect(fieldManagerFor('a')).toBe('berth-marketplace-a');
    const long = fieldManagerFor('x'.repeat(200));
    expect(long.length).toBeLessThanOrEqual(128);
    expect(long).not.toBe(fieldManagerFor(`${'x'.repeat(199)}y`));
  });
});

describe('authorizationHeader (rule 4)', () => {
  it('sends bearer as is and basic as an empty user name with the value as password', () => {
    expect(authorizationHeader({ scheme: 'bearer', value: 't0k' })).toBe('Bearer t0k');
    const basic = authorizationHeader({ scheme: 'basic', value: 'pw:x' });
    expect(Buffer.from(basic.replace('Basic ', ''), 'base64').toString()).toBe(':pw:x');
  });
});

describe('TtlCache', () => {
  it('forgets entries after their time and evicts the oldest when its bytes run out', () => {
    let now = 0;
    const c = new TtlCache<number>({ ttlMs: 100, maxBytes: 10, now: () => now });
    c.set('a', 1, 4);
    c.set('b', 2, 4);
    c.set('c', 3, 4);
    expect([c.get('a'), c.get('b'), c.get('c')]).toEqual([undefined, 2, 3]);
    expect(c.bytes).toBe(8);
    now = 100;
    expect(c.get('b')).toBeUndefined();
  });

  it('counts bytes, not entries: one large value evicts many small ones; too large is not kept', () => {
    const c = new TtlCache<string>({ ttlMs: 1000, maxBytes: 100 });
    for (let i = 0; i < 50; i++) c.set(`small-${i}`, 's', 2);
    expect(c.size).toBe(50);
    c.set('large', 'l', 90);
    expect(c.bytes).toBeLessThanOrEqual(100);
    expect(c.get('large')).toBe('l');
    expect(c.size).toBe(6);
    c.set('huge', 'h', 101);
    expect(c.get('huge')).toBeUndefined();
  });

  it('keeps an entry for its own time when given (failures, briefly)', () => {
    let now = 0;
    const c = new TtlCache<string>({ ttlMs: 1000, maxBytes: 100, now: () => now });
    c.set('failed', 'f', 1, 30);
    now = 29;
    expect(c.get('failed')).toBe('f');
    now = 30;
    expect(c.get('failed')).toBeUndefined();
    expect(c.bytes).toBe(0);
  });
});
