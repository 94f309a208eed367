import { describe, expect, it } from 'vitest';
import { clockToleranceFrom, createJwtVerifier, JwtError, parseAudiences } from './jwt.ts';

describe('createJwtVerifier', () => {
  it('parses OIDC_APPLICATION_ID as a comma list', () => {
    expect(parseAudiences(' a, b ,,c ')).toEqual(['a', 'b', 'c']);
    expect(parseAudiences(undefined)).toEqual([]);
  });

  it('refuses symmetric algorithms and none, and a missing issuer or audience', () => {
    const base = { issuer: 'http://127.0.0.1:1', audience: 'x' };
    expect(() => createJwtVerifier({ ...base, algorithms: ['RS256', 'HS256'] })).toThrow(/HS256/);
    expect(() => createJwtVerifier({ ...base, algorithms: ['none'] })).toThrow(/none/);
    expect(() => createJwtVerifier({ ...base, issuer: '' })).toThrow(/OIDC_ISSUER_URL/);
    expect(() => createJwtVerifier({ ...base, audience: ' , ' })).toThrow(/OIDC_APPLICATION_ID/);
  });

  it('reports an unreachable issuer as unavailable (a logged outage), not as a bad token', async () => {
    const verifier = createJwtVerifier({ issuer: 'http://127.0.0.1:1', audience: 'x', timeoutMs: 2000 });
    const err = await verifier.verify('eyJhbGciOiJSUzI1NiJ9.e30.c2ln').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JwtError);
    expect((err as JwtError).unavailable).toBe(true);
  });

  it('reads JWT_CLOCK_TOLERANCE_SECONDS: default 2 s, 0 to 300, anything else refused', () => {
    expect(clockToleranceFrom(undefined)).toBe(2);
    expect(clockToleranceFrom('')).toBe(2);
    expect(clockToleranceFrom('0')).toBe(0);
    expect(clockToleranceFrom('1.5')).toBe(1.5);
    for (const bad of ['-1', 'abc', '301', 'Infinity'])
      expect(() => clockToleranceFrom(bad)).toThrow(/JWT_CLOCK/);
  });
});
