import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import {
  accessTokenTypeFrom,
  clockToleranceFrom,
  createJwtVerifier,
  JwtError,
  parseAudiences,
} from './jwt.ts';

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

/** A minimal issuer on 127.0.0.1: discovery and a JWKS, and tokens signed with its key. */
async function localIssuer() {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  let issuer = '';
  const server = createServer((req, res) => {
    const body =
      req.url === '/jwks'
        ? { keys: [jwk] }
        : { issuer, jwks_uri: `${issuer}/jwks`, id_token_signing_alg_values_supported: ['RS256'] };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const sign = (claims: Record<string, unknown>, typ?: string) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: 'k1', ...(typ ? { typ } : {}) })
      .setIssuer(issuer)
      .setAudience('api')
      .setSubject('u1')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(privateKey);
  return { issuer, sign, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('access tokens only', () => {
  it('refuses a token carrying nonce, at_hash or c_hash (an ID token), accepting the same without', async () => {
    const idp = await localIssuer();
    try {
      const v = createJwtVerifier({ issuer: idp.issuer, audience: 'api' });
      await expect(v.verify(await idp.sign({ scope: 'api' }, 'at+jwt'))).resolves.toMatchObject({
        kind: 'user',
        subject: 'u1',
      });
      for (const claim of ['nonce', 'at_hash', 'c_hash']) {
        const err = await v.verify(await idp.sign({ [claim]: 'x' })).catch((e: unknown) => e);
        expect(err, claim).toBeInstanceOf(JwtError);
        expect((err as JwtError).unavailable).toBe(false);
        expect((err as JwtError).message).toContain(`"${claim}"`);
      }
    } finally {
      await idp.close();
    }
  });

  it('checks the typ header when OIDC_ACCESS_TOKEN_TYPE is set', async () => {
    const idp = await localIssuer();
    try {
      const strict = createJwtVerifier({
        issuer: idp.issuer,
        audience: 'api',
        accessTokenType: accessTokenTypeFrom(' at+jwt '),
      });
      await expect(strict.verify(await idp.sign({}, 'at+jwt'))).resolves.toMatchObject({ kind: 'user' });
      await expect(strict.verify(await idp.sign({}, 'application/at+jwt'))).resolves.toMatchObject({
        kind: 'user',
      });
      for (const typ of ['JWT', undefined])
        await expect(strict.verify(await idp.sign({}, typ)), String(typ)).rejects.toThrow(/typ/);
      expect(accessTokenTypeFrom('')).toBeUndefined();
      // Unset: any typ passes.
      const lax = createJwtVerifier({ issuer: idp.issuer, audience: 'api' });
      await expect(lax.verify(await idp.sign({}, 'JWT'))).resolves.toMatchObject({ kind: 'user' });
    } finally {
      await idp.close();
    }
  });
});
