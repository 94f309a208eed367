import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { errorHandler } from '../http/index.ts';
import { createLogger } from '../log/index.ts';
import type { ApiKeyVerifier } from './api-keys/types.ts';
import { JwtError, type JwtVerifier } from './jwt.ts';
import { type AuthVariables, authMiddleware } from './middleware.ts';
import type { AuthMode } from './mode.ts';

const PK = 'pk-svc-0123456789abcdef0123456789abcdef';
const SK = 'sk-svc-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
const LIMITED = 'sk-svc-LLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLL';
const apiKeys: ApiKeyVerifier = {
  async verify(pk, sk) {
    return pk === PK && sk === SK
      ? {
          ok: true,
          record: {
            id: '1',
            name: 'ci',
            publicKey: PK,
            secretHash: '$2',
            createdAt: '',
            expiresAt: null,
            expiresAtMs: null,
            isActive: true,
            lastUsedAt: null,
            namespace: 'ns',
          },
        }
      : sk === LIMITED
        ? { ok: false, reason: 'rate_limited', scope: 'key', retryAfterSec: 6 }
        : { ok: false, reason: 'bad_secret' };
  },
};
const jwt: JwtVerifier = {
  async verify(token) {
    if (token === 'good.jwt.token') return { kind: 'user', name: 'alice', subject: 'alice', claims: {} };
    if (token === 'down.jwt.token') throw new JwtError('issuer_unavailable', 'down', true);
    throw new JwtError('ERR_JWT_EXPIRED', 'token expired');
  },
};

function app(mode: AuthMode, publicPaths?: string[]) {
  const a = new Hono<{ Variables: AuthVariables }>();
  // The middleware throws its refusals; the app's error handler renders them, as in the API service.
  a.onError(errorHandler(createLogger({ level: 'silent' })));
  a.use('*', authMiddleware({ mode, apiKeys, jwt, publicPaths }));
  a.all('*', (c) => c.json(c.get('principal')));
  return a;
}

describe('authMiddleware', () => {
  it('lets everything through as anonymous in open mode', async () => {
    const res = await app('open').request('/v1/agents');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ kind: 'anonymous', name: 'anonymous' });
  });

  it('serves public paths without credentials, and the list is configurable', async () => {
    expect((await app('sso').request('/health')).status).toBe(200);
    expect((await app('sso').request('/docs/index.css')).status).toBe(200);
    expect((await app('sso').request('/openapi.json')).status).toBe(200);
    expect((await app('sso', ['/ping']).request('/health')).status).toBe(401);
    expect((await app('sso', ['/ping']).request('/ping')).status).toBe(200);
  });

  it('answers 401 with the challenges of the mode and the error envelope', async () => {
    const basic = await app('basic').request('/v1/x');
    expect(basic.status).toBe(401);
    expect(basic.headers.get('www-authenticate')).toBe('Basic realm="berth", charset="UTF-8"');
    expect(await basic.json()).toMatchObject({ error: { code: 'unauthorized' } });
    const sso = await app('sso').request('/v1/x', { headers: { authorization: 'Bearer bad.jwt.token' } });
    expect(sso.headers.get('www-authenticate')).toMatch(/^Bearer realm="berth", error="invalid_token"/);
    const hybrid = await app('hybrid').request('/v1/x');
    expect(hybrid.headers.get('www-authenticate')).toMatch(/Basic realm.*Bearer realm/);
  });

  it('sets the principal of an API key or a JWT', async () => {
    const basic = `Basic ${Buffer.from(`${PK}:${SK}`).toString('base64')}`;
    const res = await app('hybrid').request('/v1/x', { headers: { authorization: basic } });
    expect(await res.json()).toMatchObject({ kind: 'api-key', name: PK, keyName: 'ci' });
    const user = await app('hybrid').request('/v1/x', {
      headers: { authorization: 'Bearer good.jwt.token' },
    });
    expect(await user.json()).toMatchObject({ kind: 'user', name: 'alice' });
  });

  it('answers 401 when the issuer cannot be reached: a token it cannot verify is not valid', async () => {
    const res = await app('sso').request('/v1/x', { headers: { authorization: 'Bearer down.jwt.token' } });
    expect(res.status).toBe(401);
    expect((await res.json()).error.message).toContain('OIDC issuer cannot be reached');
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('refuses client-supplied Impersonate-* headers in every mode', async () => {
    for (const mode of ['open', 'basic', 'sso', 'hybrid'] as const) {
      const res = await app(mode).request('/v1/x', {
        headers: { 'Impersonate-User': 'system:admin', authorization: 'Bearer good.jwt.token' },
      });
      expect(res.status, mode).toBe(403);
      expect(await res.json()).toMatchObject({ error: { code: 'impersonation_forbidden' } });
    }
  });

  it('refuses to build a mode without its verifier', () => {
    expect(() => authMiddleware({ mode: 'sso' })).toThrow(/JWT verifier/);
    expect(() => authMiddleware({ mode: 'basic' })).toThrow(/API key service/);
  });

  it('answers a rate-limited API key attempt 429 with Retry-After, not 401', async () => {
    const res = await app('basic').request('/v1/agents', { headers: { 'x-api-key': `${PK}:${LIMITED}` } });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('6');
    expect((await res.json()).error).toMatchObject({
      code: 'rate_limited',
      message: expect.stringContaining('6 s'),
    });
  });
});
