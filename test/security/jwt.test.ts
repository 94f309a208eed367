/**
 * Bearer JWTs at the edges of their validity (issue 18 item 3): an expired token is refused within
 * the configured clock tolerance (JWT_CLOCK_TOLERANCE_SECONDS, default 2 s — it used to be 10 s),
 * and a token that cannot be verified because the OIDC issuer is down is a 401 plus an error log
 * line, never a 503. A real OpenID provider issues and signs; the real API service verifies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureLogs } from '../auth/support.ts';
import { type OidcFixture, startOidcProvider } from '../fixtures/oidc/provider.ts';
import { client, startService, type TestService } from '../gateway/support.ts';
import { createNamespace } from '../support/kube.ts';

const AUD = 'https://berth.test/jwt-edges';
const logs = captureLogs();
let ns: string;
let idp: OidcFixture;
const services: TestService[] = [];

async function instance(env: Record<string, string>): Promise<TestService> {
  const svc = await startService({ namespace: ns, logger: logs.logger, env: { AUTH_MODE: 'sso', ...env } });
  services.push(svc);
  return svc;
}

beforeAll(async () => {
  ns = await createNamespace('sec-jwt');
  idp = await startOidcProvider();
});
afterAll(async () => {
  for (const s of services) await s.close();
  await idp?.close();
});

/** Polls with the token until it is refused; returns how long after `exp` that was (ms). */
async function refusedAfterExpiry(svc: TestService, token: string, exp: number): Promise<number> {
  const api = client(svc.url, { authorization: `Bearer ${token}` });
  for (;;) {
    const res = await api.get(`/v1/namespaces/${ns}/agents`);
    if (res.status === 401) {
      expect(res.body.error.message).toMatch(/expired/);
      return Date.now() - exp * 1000;
    }
    expect(res.status).toBe(200);
    // Bounded: a refusal later than this is the failure the test is about.
    if (Date.now() > exp * 1000 + 15_000) throw new Error('an expired token was still accepted 15 s later');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('an expired JWT', () => {
  it.each([
    ['the default tolerance (2 s)', {}, 2],
    ['JWT_CLOCK_TOLERANCE_SECONDS=0', { JWT_CLOCK_TOLERANCE_SECONDS: '0' }, 0],
  ] as const)('is refused at once with %s', async (_label, extra, tolerance) => {
    const svc = await instance({ OIDC_ISSUER_URL: idp.issuer, OIDC_APPLICATION_ID: AUD, ...extra });
    const exp = Math.floor(Date.now() / 1000) + 2;
    const token = await idp.signWithProviderKey({ aud: AUD, sub: `short-${tolerance}` }, exp);
    // Accepted while valid …
    const first = await client(svc.url, { authorization: `Bearer ${token}` }).get(
      `/v1/namespaces/${ns}/agents`,
    );
    expect(first.status).toBe(200);
    // … and refused within the tolerance after `exp` (plus the 1 s granularity of NumericDate).
    const late = await refusedAfterExpiry(svc, token, exp);
    expect(late).toBeLessThanOrEqual(tolerance * 1000 + 1200);
  });

  it('refuses a tolerance that is not a number of seconds at start-up', async () => {
    await expect(
      instance({ OIDC_ISSUER_URL: idp.issuer, OIDC_APPLICATION_ID: AUD, JWT_CLOCK_TOLERANCE_SECONDS: 'ten' }),
    ).rejects.toThrow(/JWT_CLOCK_TOLERANCE_SECONDS/);
  });
});

describe('an unreachable OIDC issuer', () => {
  it('makes a bearer token a 401 (with an error log line), never a 503', async () => {
    // An issuer that never answers: a port nothing listens on.
    const down = await instance({ OIDC_ISSUER_URL: 'http://127.0.0.1:9', OIDC_APPLICATION_ID: AUD });
    const token = await idp.token(AUD);
    const res = await client(down.url, { authorization: `Bearer ${token}` }).get(
      `/v1/namespaces/${ns}/agents`,
    );
    expect(res.status).toBe(401);
    expect(res.body.error.message).toContain('OIDC issuer cannot be reached');
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(logs.text()).toContain('cannot verify bearer token: issuer unavailable');
  });

  it('keeps accepting tokens of keys it already fetched when the issuer goes down, and 401s the rest', async () => {
    const other = await startOidcProvider();
    try {
      const svc = await instance({ OIDC_ISSUER_URL: other.issuer, OIDC_APPLICATION_ID: AUD });
      const api = (t: string) => client(svc.url, { authorization: `Bearer ${t}` });
      const before = await other.token(AUD);
      expect((await api(before).get(`/v1/namespaces/${ns}/agents`)).status).toBe(200);
      await other.rotateKeys();
      const unknownKid = await other.token(AUD);
      await other.close();
      // The cached key still verifies; the new kid needs the JWKS, which is gone: 401, not 503.
      expect((await api(before).get(`/v1/namespaces/${ns}/agents`)).status).toBe(200);
      const res = await api(unknownKid).get(`/v1/namespaces/${ns}/agents`);
      expect(res.status).toBe(401);
    } finally {
      await other.close();
    }
  });
});

describe('log redaction', () => {
  it('no token used in this file appears in any log line', () => {
    const text = logs.text();
    for (const secret of idp.secrets())
      expect(text.includes(secret), `leaked ${secret.slice(0, 12)}…`).toBe(false);
  });
});
