import { describe, expect, it } from 'vitest';
import { createJwtVerifier, JwtError, parseAudiences } from './jwt.ts';

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

  it('reports an unreachable issuer as unavailable (503), not as a bad token', async () => {
    const verifier = createJwtVerifier({ issuer: 'http://127.0.0.1:1', audience: 'x', timeoutMs: 2000 });
    const err = await verifier.verify('eyJhbGciOiJSUzI1NiJ9.e30.c2ln').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JwtError);
    expect((err as JwtError).unavailable).toBe(true);
  });
});
