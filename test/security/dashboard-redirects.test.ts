/**
 * Issue 26 item 7: after sign-in (and sign-out) the dashboard never sends the browser off its
 * origin or out of its base path, whatever `callbackUrl` said. `/.//evil.com`, `/a/..//evil.com`,
 * `/%2e//evil.com` and `https://<origin>//evil.com` all used to end as `Location: //evil.com` at the
 * root base path. Each case runs the whole sign-in: the real dashboard, the real OpenID provider
 * (oidc-provider's login form), redirects followed by hand so the callback's `Location` is seen.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  freePort,
  type StubApi,
  ssoEnv,
  startDashboard,
  startStubApi,
  type TestDashboard,
} from '../dashboard/support.ts';
import { type InteractiveOidc, startInteractiveOidc } from '../fixtures/oidc/interactive.ts';
import { CookieJar, callbackLocation, send, signInOverHttp } from './signin-over-http.ts';

const TENANT = '/team-a';
let oidc: InteractiveOidc;
let api: StubApi;
const dash: Record<'root' | 'tenant', TestDashboard> = {} as never;

beforeAll(async () => {
  const [rootPort, tenantPort] = await Promise.all([freePort(), freePort()]);
  const rootOrigin = `http://127.0.0.1:${rootPort}`;
  const tenantOrigin = `http://127.0.0.1:${tenantPort}`;
  api = await startStubApi();
  oidc = await startInteractiveOidc({
    redirectUris: [
      `${rootOrigin}/api/auth/callback/test-idp`,
      `${tenantOrigin}${TENANT}/api/auth/callback/test-idp`,
    ],
    postLogoutRedirectUris: [`${rootOrigin}/signout`, `${tenantOrigin}${TENANT}/signout`],
  });
  dash.root = await startDashboard(ssoEnv(oidc, rootOrigin, '', api.url), rootPort);
  dash.tenant = await startDashboard(ssoEnv(oidc, tenantOrigin, TENANT, api.url), tenantPort);
});

afterAll(async () => {
  await Promise.all([dash.root?.close(), dash.tenant?.close()]);
  await oidc?.close();
  await api?.close();
});

/** Callback URLs that each reach (or once reached) a Location another host can be read from. */
function hostile(d: TestDashboard, base: string): string[] {
  const spelled = [
    '/.//evil.com',
    '/a/..//evil.com',
    '/a/b/../..//evil.com',
    '/%2e//evil.com',
    '/%2E%2E//evil.com',
    '/a/%2e%2e//evil.com',
    '//evil.com',
    '/\\evil.com',
    '/./\\evil.com',
    '/\t/evil.com',
    '/\n/evil.com',
    '/%09/evil.com',
    '/%5Cevil.com',
    '/%2F/evil.com',
    '/%2f%2fevil.com',
  ];
  return [
    ...spelled,
    ...spelled.map((p) => `${base}${p}`),
    ...spelled.map((p) => `${d.origin}${base}${p}`),
    `${d.origin}//evil.com`,
    `${d.origin}${base}//evil.com`,
    '\\\\evil.com',
    'https://evil.com/',
    'https:evil.com',
    'https:/evil.com',
    'javascript:alert(1)',
  ];
}

/** A Location that stays on the dashboard: same origin, under the base path, not `//` or `/\`. */
function expectStays(location: string | null | undefined, d: TestDashboard, base: string, label: string) {
  expect(location, label).toBeTruthy();
  const loc = location as string;
  expect(new URL(loc, `${d.url}/somewhere`).origin, label).toBe(d.origin);
  expect(loc.startsWith(`${base}/`), `${label} → ${loc}`).toBe(true);
  expect(/^[/\\]/.test(loc.slice(base.length + 1)), `${label} → ${loc}`).toBe(false);
}

describe.each([
  ['the root base path', 'root', ''],
  ['a tenant base path', 'tenant', TENANT],
] as const)('sign-in at %s', (_label, which, base) => {
  it('keeps a legitimate destination, dot segments resolved', async () => {
    const d = dash[which];
    const cases: Array<[string, string]> = [
      [`${base}/queries?x=1`, `${base}/queries?x=1`],
      [`${base}/a/../agents`, `${base}/agents`],
    ];
    for (const [asked, expected] of cases) {
      const hops = await signInOverHttp({
        jar: new CookieJar(),
        start: `${d.url}/api/auth/signin?callbackUrl=${encodeURIComponent(asked)}`,
        issuer: oidc.issuer,
        login: 'alice',
      });
      expect(callbackLocation(hops), asked).toBe(expected);
    }
  });

  it('answers every hostile callbackUrl with a Location on the dashboard, through the real flow', async () => {
    const d = dash[which];
    for (const raw of hostile(d, base)) {
      // As sent, and once more percent-encoded (what a link carrying it already encoded would hold).
      for (const param of [encodeURIComponent(raw), encodeURIComponent(encodeURIComponent(raw))]) {
        const hops = await signInOverHttp({
          jar: new CookieJar(),
          start: `${d.url}/api/auth/signin?callbackUrl=${param}`,
          issuer: oidc.issuer,
          login: 'mallory-victim',
        });
        const location = callbackLocation(hops);
        expectStays(location, d, base, JSON.stringify(raw));
        // The browser would end on the dashboard (a page, or its 404 for a harmless odd path).
        expect(new URL(hops.at(-1)?.url ?? '').origin, JSON.stringify(hops)).toBe(d.origin);
      }
    }
  });

  it('answers every hostile callbackUrl of a sign-out POST with a Location on the dashboard', async () => {
    const d = dash[which];
    const jar = new CookieJar();
    const csrf = await (await send(jar, `${d.url}/api/auth/csrf`, { accept: 'application/json' })).json();
    for (const raw of hostile(d, base)) {
      const res = await send(jar, `${d.url}/api/auth/signout`, {
        method: 'POST',
        body: new URLSearchParams({ csrfToken: csrf.csrfToken, callbackUrl: raw }),
      });
      expect(res.status, JSON.stringify(raw)).toBe(302);
      expectStays(res.headers.get('location'), d, base, JSON.stringify(raw));
    }
  });
});
