/**
 * What an sso dashboard serves to a browser without a session, over HTTP: the middleware's
 * protection (pages redirect to sign-in, API calls get 401 and are never forwarded), the public
 * routes, and the cookie flags behind https (BASE_URL https: Secure and the `__Secure-` prefix).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type InteractiveOidc, startInteractiveOidc } from '../fixtures/oidc/interactive.ts';
import {
  freePort,
  type StubApi,
  setCookies,
  ssoEnv,
  startDashboard,
  startStubApi,
  type TestDashboard,
} from './support.ts';

let oidc: InteractiveOidc;
let api: StubApi;
let dash: TestDashboard;
let behindTls: TestDashboard;

beforeAll(async () => {
  const port = await freePort();
  api = await startStubApi();
  oidc = await startInteractiveOidc({ redirectUris: [], postLogoutRedirectUris: [] });
  dash = await startDashboard(ssoEnv(oidc, `http://127.0.0.1:${port}`, '', api.url), port);
  // Reached over plain http here, as behind an ingress that terminates TLS for berth.example.com.
  behindTls = await startDashboard({ ...ssoEnv(oidc, 'https://berth.example.com', '/team-a', api.url) });
});

afterAll(async () => {
  await Promise.all([dash?.close(), behindTls?.close()]);
  await oidc?.close();
  await api?.close();
});

const get = (url: string, init: RequestInit = {}) => fetch(url, { redirect: 'manual', ...init });

describe('without a session', () => {
  it('redirects every page to sign-in with its destination', async () => {
    for (const path of ['/', '/queries?x=1', '/chat', '/anything/else']) {
      const res = await get(`${dash.url}${path}`);
      expect(res.status, path).toBe(302);
      expect(res.headers.get('location'), path).toBe(
        `/api/auth/signin?callbackUrl=${encodeURIComponent(path)}`,
      );
    }
  });

  it('answers API calls 401 and never forwards them', async () => {
    const before = api.seen.length;
    for (const [method, path] of [
      ['GET', '/api/v1/namespaces'],
      ['POST', '/api/v1/api-keys'],
      ['GET', '/api/compat/v1/models'],
    ] as const) {
      const res = await get(`${dash.url}${path}`, { method, headers: { authorization: 'Bearer forged' } });
      expect(res.status, path).toBe(401);
      expect((await res.json()).error.code).toBe('unauthorized');
    }
    expect(api.seen.length).toBe(before);
  });

  it('refuses a forged or foreign session cookie like none at all', async () => {
    for (const cookie of [
      'berth.session-token=garbage',
      'berth.session-token=eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..x.y.z',
    ]) {
      expect((await get(`${dash.url}/api/v1/x`, { headers: { cookie } })).status).toBe(401);
    }
  });

  it('serves the public routes: auth, /signout, static assets, favicon, health', async () => {
    for (const path of [
      '/signout',
      '/static/app/manifest.json',
      '/static/app/schemas.json',
      '/favicon.ico',
      '/health',
    ]) {
      expect((await get(`${dash.url}${path}`)).status, path).toBe(200);
    }
    // The bundle's content-hashed files are public too, and never asked for again.
    const manifest = await (await get(`${dash.url}/static/app/manifest.json`)).json();
    for (const name of ['main.js', 'main.css', 'yaml.js', 'markdown.js', 'chart.js']) {
      const res = await get(`${dash.url}/static/app/${manifest[name]}`);
      expect(res.status, name).toBe(200);
      expect(res.headers.get('cache-control'), name).toBe('public, max-age=31536000, immutable');
    }
    expect(await (await get(`${dash.url}/api/auth/session`)).json()).toEqual({});
    expect(await (await get(`${dash.url}/api/auth/providers`)).json()).toEqual({
      'test-idp': {
        id: 'test-idp',
        name: 'Test IdP',
        type: 'oidc',
        signinUrl: `${dash.url}/api/auth/signin/test-idp`,
        callbackUrl: `${dash.url}/api/auth/callback/test-idp`,
      },
    });
    expect((await (await get(`${dash.url}/api/auth/csrf`)).json()).csrfToken).toMatch(/^[\w-]{40,}$/);
    const signin = await get(`${dash.url}/api/auth/signin?callbackUrl=%2Fagents`);
    expect(signin.status).toBe(302);
    expect(signin.headers.get('location')?.startsWith(`${oidc.issuer}/auth?`)).toBe(true);
    expect((await get(`${dash.url}/api/auth/nothing-here`)).status).toBe(404);
  });

  it('serves pages with a strict content security policy (no inline script, nothing from elsewhere)', async () => {
    const res = await get(`${dash.url}/signout`);
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(await res.text()).not.toMatch(/<script(?![^>]*\bsrc=)/);
  });
});

describe('behind https', () => {
  it('marks every cookie Secure, HTTP-only and SameSite=Lax, with the __Secure- prefix and its path', async () => {
    const signin = await get(`${behindTls.url}/api/auth/signin`);
    expect(signin.status).toBe(302);
    const csrf = await get(`${behindTls.url}/api/auth/csrf`);
    const cookies = [...setCookies(signin), ...setCookies(csrf)];
    expect(cookies.map((c) => c.name)).toEqual(['__Secure-berth.signin', '__Secure-berth.csrf-token']);
    for (const c of cookies) {
      expect(c.attrs).toEqual(expect.arrayContaining(['HttpOnly', 'Secure', 'SameSite=Lax']));
    }
    expect(cookies[0]?.attrs).toContain('Path=/team-a/api/auth');
    expect(cookies[1]?.attrs).toContain('Path=/team-a');
    // The provider is told the https callback under the prefix.
    const authorize = new URL(signin.headers.get('location') as string);
    expect(authorize.searchParams.get('redirect_uri')).toBe(
      'https://berth.example.com/team-a/api/auth/callback/test-idp',
    );
    // The unprotected page redirects to the prefixed sign-in.
    expect((await get(`${behindTls.url}/models`)).headers.get('location')).toBe(
      `/team-a/api/auth/signin?callbackUrl=${encodeURIComponent('/team-a/models')}`,
    );
  });
});
