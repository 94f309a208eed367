import { generateKeyPair as joseKeyPair, SignJWT } from 'jose';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AuthMode, createJwtVerifier, parseAudiences } from '../../pkg/auth/index.ts';
import { type OidcFixture, startOidcProvider } from '../fixtures/oidc/provider.ts';
import { createNamespace } from '../support/kube.ts';
import { basic, captureLogs, createKey, serveApi, startKeyService, type TestApi } from './support.ts';

const AUD = 'https://berth.test/api';
const ALT_AUD = 'https://alt.berth.test';
const logs = captureLogs();
const stops: Array<() => Promise<void>> = [];
const apis = {} as Record<AuthMode, TestApi>;
const secrets: string[] = [];
let idp: OidcFixture;
let key: { public_key: string; secret_key: string };

/** Status and principal kind of GET /v1/whoami with the given headers. */
async function call(mode: AuthMode, headers: Record<string, string>) {
  const res = await fetch(`${apis[mode].url}/v1/whoami`, { headers });
  const body = (await res.json()) as { kind?: string; error?: { message: string } };
  return {
    status: res.status,
    kind: body.kind,
    message: body.error?.message,
    challenge: res.headers.get('www-authenticate'),
  };
}

beforeAll(async () => {
  const ns = await createNamespace('auth-modes');
  idp = await startOidcProvider();
  const keys = await startKeyService(ns, logs.logger);
  // OIDC_APPLICATION_ID as a comma list: any listed audience passes. A cooldown of 0 lets the
  // rotation test refetch the JWKS at once (production keeps jose's 30 s).
  const jwt = createJwtVerifier({
    issuer: idp.issuer,
    audience: parseAudiences(` ${AUD}, ${ALT_AUD} `),
    jwksCooldownMs: 0,
    logger: logs.logger,
  });
  for (const mode of ['open', 'basic', 'sso', 'hybrid'] as const)
    apis[mode] = await serveApi({ mode, service: keys.service, jwt, logger: logs.logger });
  stops.push(idp.close, keys.stop, ...Object.values(apis).map((a) => a.stop));
  key = await createKey(apis.open, { name: 'modes' });
  secrets.push(key.secret_key);
});

afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
});

describe('each mode × each credential kind', () => {
  it('accepts or answers 401 exactly as the mode says', async () => {
    const token = await idp.token(AUD);
    const pair = `${key.public_key}:${key.secret_key}`;
    const wrongSecret = generateWrongSecret();
    secrets.push(wrongSecret);
    const credentials: Record<string, Record<string, string>> = {
      none: {},
      basic: { authorization: basic(key.public_key, key.secret_key) },
      'x-api-key': { 'x-api-key': pair },
      'bearer-key': { authorization: `Bearer ${pair}` },
      jwt: { authorization: `Bearer ${token}` },
      'bad-key': { authorization: basic(key.public_key, wrongSecret) },
      'bad-jwt': { authorization: `Bearer ${token.slice(0, -4)}AAAA` },
    };
    // 200 = accepted; the kind is what the principal must be.
    const expected: Record<AuthMode, Record<string, number | string>> = {
      open: {
        none: 'anonymous',
        basic: 'anonymous',
        'x-api-key': 'anonymous',
        'bearer-key': 'anonymous',
        jwt: 'anonymous',
        'bad-key': 'anonymous',
        'bad-jwt': 'anonymous',
      },
      basic: {
        none: 401,
        basic: 'api-key',
        'x-api-key': 'api-key',
        'bearer-key': 'api-key',
        jwt: 401,
        'bad-key': 401,
        'bad-jwt': 401,
      },
      sso: {
        none: 401,
        basic: 401,
        'x-api-key': 401,
        'bearer-key': 401,
        jwt: 'user',
        'bad-key': 401,
        'bad-jwt': 401,
      },
      hybrid: {
        none: 401,
        basic: 'api-key',
        'x-api-key': 'api-key',
        'bearer-key': 'api-key',
        jwt: 'user',
        'bad-key': 401,
        'bad-jwt': 401,
      },
    };
    const challenges: Record<AuthMode, RegExp> = {
      open: /^$/,
      basic: /^Basic realm="berth", charset="UTF-8"$/,
      sso: /^Bearer realm="berth"/,
      hybrid: /^Basic realm="berth", charset="UTF-8", Bearer realm="berth"/,
    };
    for (const mode of ['open', 'basic', 'sso', 'hybrid'] as const) {
      for (const [name, headers] of Object.entries(credentials)) {
        const want = expected[mode][name];
        const got = await call(mode, headers);
        const label = `${mode} × ${name}`;
        if (want === 401) {
          expect(got.status, label).toBe(401);
          expect(got.challenge ?? '', label).toMatch(challenges[mode]);
          expect(got.message, label).toBeTruthy();
        } else {
          expect(got.status, label).toBe(200);
          expect(got.kind, label).toBe(want);
        }
      }
    }
    expect((await fetch(`${apis.sso.url}/health`)).status).toBe(200);
  });

  it('the openai SDK authenticates with the key in bearer form (basic mode)', async () => {
    const client = new OpenAI({
      baseURL: `${apis.basic.url}/compat/v1`,
      apiKey: `${key.public_key}:${key.secret_key}`,
    });
    expect((await client.models.list()).data).toEqual([]);
    const refused = new OpenAI({
      baseURL: `${apis.basic.url}/compat/v1`,
      apiKey: 'sk-not-a-berth-key',
      maxRetries: 0,
    });
    await expect(refused.models.list()).rejects.toMatchObject({ status: 401 });
  });
});

describe('bearer JWTs from a real OpenID provider', () => {
  const sso = (token: string) => call('sso', { authorization: `Bearer ${token}` });

  it('accepts any audience of the comma list, refuses others', async () => {
    expect((await sso(await idp.token(ALT_AUD))).status).toBe(200);
    const wrong = await sso(await idp.token('https://other-tenant.berth.test'));
    expect(wrong.status).toBe(401);
    expect(wrong.message).toMatch(/aud/);
    expect(wrong.challenge).toMatch(/error="invalid_token"/);
  });

  it('refuses an expired token signed by the provider', async () => {
    const expired = await idp.signWithProviderKey(
      { aud: AUD, sub: 'late' },
      Math.floor(Date.now() / 1000) - 3600,
    );
    const got = await sso(expired);
    expect(got.status).toBe(401);
    expect(got.message).toMatch(/expired/);
  });

  it('refuses alg none, a token signed by another key under the provider kid, and HS256', async () => {
    const now = Math.floor(Date.now() / 1000);
    const claims = { iss: idp.issuer, aud: AUD, sub: 'mallory', iat: now, exp: now + 600 };
    const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const none = `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`;
    const { privateKey } = await joseKeyPair('RS256');
    const forged = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: idp.kid() })
      .sign(privateKey);
    const hs = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', kid: idp.kid() })
      .sign(new TextEncoder().encode(idp.clientSecret));
    secrets.push(none, forged, hs);
    for (const token of [none, forged, hs]) expect((await sso(token)).status).toBe(401);
  });

  it('follows a key rotation at the provider (new kid) and keeps accepting tokens of the old key', async () => {
    const before = await idp.token(AUD);
    const oldKid = idp.kid();
    expect((await sso(before)).status).toBe(200);
    await idp.rotateKeys();
    const after = await idp.token(AUD);
    expect(JSON.parse(Buffer.from(after.split('.')[0] as string, 'base64url').toString()).kid).not.toBe(
      oldKid,
    );
    expect((await sso(after)).status).toBe(200);
    expect((await sso(before)).status).toBe(200);
  });
});

describe('log redaction', () => {
  it('no secret used by this file appears in any log line', () => {
    const text = logs.text();
    // The capture really saw the requests and their credential headers …
    expect(text).toMatch(/"authorization":"\[REDACTED\]"/);
    expect(text).toMatch(/"x-api-key":"\[REDACTED\]"/);
    expect(text).toContain(key.public_key);
    // … and none of the secrets that went through them.
    const all = [...secrets, ...idp.secrets()];
    expect(all.length).toBeGreaterThan(8);
    for (const secret of all) expect(text.includes(secret), `leaked ${secret.slice(0, 12)}…`).toBe(false);
    const signatures = all.filter((s) => s.startsWith('eyJ')).map((s) => s.split('.')[2] ?? '');
    for (const sig of signatures.filter((s) => s.length > 0))
      expect(text.includes(sig), 'leaked a JWT signature').toBe(false);
  });
});

function generateWrongSecret(): string {
  return `sk-svc-${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')}`;
}
