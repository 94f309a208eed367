/**
 * `GET /metrics` of the API service authenticates like the API itself, per AUTH_MODE (open in
 * `open`), while the probes never need credentials; refusals are counted by reason, and no
 * credential reaches the exposition. The real service on its own port, a real OpenID provider.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHARED_CACHE } from '../../pkg/api/index.ts';
import type { AuthMode } from '../../pkg/auth/index.ts';
import { InformerCache } from '../../pkg/kube/cache.ts';
import { captureLogs } from '../auth/support.ts';
import { type OidcFixture, startOidcProvider } from '../fixtures/oidc/provider.ts';
import { basic, client, startService, type TestService } from '../gateway/support.ts';
import { createNamespace, kubeConfig } from '../support/kube.ts';
import { sample } from './support.ts';

const AUD = 'https://berth.test/obs';
const MODES = ['open', 'basic', 'sso', 'hybrid'] as const;
const logs = captureLogs();
const svc = {} as Record<AuthMode, TestService>;
const stops: Array<() => Promise<void>> = [];
let idp: OidcFixture;
let key: { public_key: string; secret_key: string };

beforeAll(async () => {
  const ns = await createNamespace('obs-auth');
  idp = await startOidcProvider();
  stops.push(idp.close);
  const cache = InformerCache.of(
    { kc: kubeConfig('gateway'), namespace: ns, logger: logs.logger },
    SHARED_CACHE,
  );
  cache.start();
  await cache.waitForSync(30_000);
  stops.push(() => cache.stop());
  for (const mode of MODES) {
    const env = { AUTH_MODE: mode, OIDC_ISSUER_URL: idp.issuer, OIDC_APPLICATION_ID: AUD };
    svc[mode] = await startService({ namespace: ns, env, logger: logs.logger, cache });
    stops.push(svc[mode].close);
  }
  const created = await client(svc.open.url).post('/v1/api-keys', { name: 'scraper' });
  expect(created.status, created.text).toBe(201);
  key = created.body;
}, 120_000);

afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
});

describe('/metrics per AUTH_MODE', () => {
  it('answers scrapes with the credentials the mode accepts, 401 otherwise; probes stay open', async () => {
    const token = await idp.token(AUD);
    const creds: Record<string, Record<string, string>> = {
      none: {},
      'api-key': { authorization: basic(key.public_key, key.secret_key) },
      jwt: { authorization: `Bearer ${token}` },
      'bad-key': { authorization: basic(key.public_key, `sk-svc-${'A'.repeat(43)}`) },
      'bad-jwt': { authorization: `Bearer ${token.slice(0, -4)}AAAA` },
    };
    const accepts: Record<AuthMode, string[]> = {
      open: Object.keys(creds),
      basic: ['api-key'],
      sso: ['jwt'],
      hybrid: ['api-key', 'jwt'],
    };
    for (const mode of MODES) {
      for (const [kind, headers] of Object.entries(creds)) {
        const res = await fetch(`${svc[mode].url}/metrics`, { headers });
        const body = await res.text();
        const label = `${mode} × ${kind}`;
        if (accepts[mode].includes(kind)) {
          expect(res.status, label).toBe(200);
          expect(body, label).toMatch(/^# TYPE berth_api_http_requests_total counter$/m);
        } else {
          expect(res.status, label).toBe(401);
          expect(res.headers.get('www-authenticate'), label).toBeTruthy();
        }
      }
      for (const path of ['/health', '/healthz', '/readyz'])
        expect((await fetch(`${svc[mode].url}${path}`)).status, `${mode} ${path}`).toBe(200);
    }
  });

  it('counts refusals by reason and never exposes a credential', async () => {
    const token = await idp.token(AUD);
    const scrape = async (mode: AuthMode, headers: Record<string, string>) => {
      const res = await fetch(`${svc[mode].url}/metrics`, { headers });
      expect(res.status).toBe(200);
      return res.text();
    };
    const asKey = { authorization: basic(key.public_key, key.secret_key) };
    const asJwt = { authorization: `Bearer ${token}` };
    const reasons = async (mode: AuthMode, headers: Record<string, string>) => {
      const text = await scrape(mode, headers);
      const of = (reason: string) => sample(text, 'berth_api_auth_failures_total', { reason }) ?? 0;
      return { text, of };
    };
    const basicBefore = await reasons('basic', asKey);
    const ssoBefore = await reasons('sso', asJwt);
    await fetch(`${svc.basic.url}/v1/api-keys`);
    await fetch(`${svc.basic.url}/v1/api-keys`, { headers: asJwt });
    await fetch(`${svc.basic.url}/v1/api-keys`, {
      headers: { authorization: basic(key.public_key, `sk-svc-${'B'.repeat(43)}`) },
    });
    await fetch(`${svc.sso.url}/v1/api-keys`, { headers: asKey });
    await fetch(`${svc.sso.url}/v1/api-keys`, {
      headers: { authorization: `Bearer ${token.slice(0, -4)}AAAA` },
    });
    await fetch(`${svc.sso.url}/v1/api-keys`, { headers: { 'impersonate-user': 'admin', ...asJwt } });

    const basicAfter = await reasons('basic', asKey);
    const ssoAfter = await reasons('sso', asJwt);
    const grew = (a: typeof basicAfter, b: typeof basicBefore, reason: string) => a.of(reason) - b.of(reason);
    expect(grew(basicAfter, basicBefore, 'missing_credentials')).toBe(1);
    expect(grew(basicAfter, basicBefore, 'jwt_not_accepted')).toBe(1);
    expect(grew(basicAfter, basicBefore, 'api_key_bad_secret')).toBe(1);
    expect(grew(ssoAfter, ssoBefore, 'api_key_not_accepted')).toBe(1);
    expect(grew(ssoAfter, ssoBefore, 'invalid_token')).toBe(1);
    expect(grew(ssoAfter, ssoBefore, 'impersonation_header')).toBe(1);
    for (const text of [basicAfter.text, ssoAfter.text]) {
      expect(text).not.toContain(key.secret_key);
      expect(text).not.toContain(key.public_key);
      expect(text).not.toContain(token.slice(0, 20));
    }
  });
});
