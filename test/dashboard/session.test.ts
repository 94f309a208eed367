/**
 * The session's life in a real browser: the 30-minute sliding TTL, the provider's tokens refreshed
 * every 10 minutes, before they expire and when the window regains focus, a refresh failure sending
 * the user to sign-in, and a session large enough to be chunked. The dashboard's clock is moved
 * forward instead of waiting; the provider (real time) issues 5-minute access tokens.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InteractiveOidc } from '../fixtures/oidc/interactive.ts';
import { loginAtProvider, type TestContext } from './browser.ts';
import { type BrowserStack, startBrowserStack } from './stack.ts';
import { json, type TestDashboard } from './support.ts';

const MINUTE = 60_000;
let stack: BrowserStack;
let oidc: InteractiveOidc;
let dash: TestDashboard;

beforeAll(async () => {
  stack = await startBrowserStack({
    accessTokenTtl: 300,
    // A user in many groups: the ID token, and with it the session, outgrows one cookie.
    claimsFor: (login) =>
      login === 'many-groups' ? { groups: Array.from({ length: 150 }, (_, i) => `group-number-${i}`) } : {},
  });
  stack.api.on('/v1/whoami', (r, res) => json(res, 200, { authorization: r.headers.authorization }));
  ({ oidc, dash } = stack);
});

afterAll(() => stack?.close());

const signIn = (login: string) => stack.signIn(login);

/**
 * What the API received on one proxied call made with the browser's cookies. Through the context's
 * request API rather than the page: once the session cannot be refreshed the open page may head for
 * sign-in on its own (a focus event, its own API call), which would destroy a page-side fetch.
 */
const whoami = async (t: TestContext) => {
  const r = await t.context.request.get(`${dash.url}/api/v1/whoami`);
  return { status: r.status(), body: await r.json() };
};

const refreshes = () => oidc.issued.filter((i) => i.grant === 'refresh_token').length;

describe('the session', () => {
  it('expires after 30 minutes without use, and not while it is used', async () => {
    const t = await signIn('alice');
    for (const step of [20, 20, 20]) {
      dash.clock.advance(step * MINUTE);
      const st = (await whoami(t)).status;
      expect(st, `after ${step} more minutes of inactivity`).toBe(200);
    }
    dash.clock.advance(31 * MINUTE);
    expect((await whoami(t)).status).toBe(401);
    t.navigations.length = 0;
    await t.page.goto(`${dash.url}/agents`);
    // Back through sign-in; the provider still knows the user, so no login form this time.
    await t.page.waitForURL(`${dash.url}/agents`);
    expect(t.navigations[1]).toBe(`${dash.url}/api/auth/signin?callbackUrl=%2Fagents`);
    await t.context.close();
  });

  it('is chunked over several cookies when it outgrows one, and still works', async () => {
    const t = await signIn('many-groups');
    const names = (await t.context.cookies())
      .map((c) => c.name)
      .filter((n) => n.startsWith('berth.session-token'));
    expect(names.length).toBeGreaterThan(1);
    expect(names.sort()).toEqual(names.map((_, i) => `berth.session-token.${i}`));
    expect((await whoami(t)).body.authorization).toBe(`Bearer ${oidc.issued.at(-1)?.accessToken}`);
    await t.context.close();
  });
});

describe("the provider's tokens", () => {
  it('are refreshed before they expire, the new access token going to the API', async () => {
    const t = await signIn('bob');
    const first = (await whoami(t)).body.authorization;
    const before = refreshes();
    dash.clock.advance(4 * MINUTE);
    expect((await whoami(t)).body.authorization).toBe(first);
    expect(refreshes()).toBe(before);
    // Half a minute from the provider's 5-minute expiry: refreshed before use.
    dash.clock.advance(40_000);
    const second = (await whoami(t)).body.authorization;
    expect(refreshes()).toBe(before + 1);
    expect(second).toBe(`Bearer ${oidc.issued.at(-1)?.accessToken}`);
    expect(second).not.toBe(first);
    await t.context.close();
  });

  it('are refreshed when the window regains focus', async () => {
    const t = await signIn('dave');
    const before = refreshes();
    dash.clock.advance(2 * MINUTE);
    const asked = t.page.waitForResponse((r) => r.url().endsWith('/api/auth/session?refresh=focus'));
    await t.page.evaluate(() => (globalThis as any).dispatchEvent(new Event('focus')));
    expect(await (await asked).json()).toMatchObject({ user: { sub: 'dave' } });
    expect(refreshes()).toBe(before + 1);
    await t.context.close();
  });

  it('are refreshed every 10 minutes by the page timer, without keeping an idle session alive', async () => {
    const t = await signIn('erin');
    // Idle means no page: an open one may report a focus (Chromium fires its own) or call the API
    // between the clock's jumps, which rightly slides the session and made this test flaky. The
    // cookies stay in the context.
    await t.page.close();
    // What the page's timer asks, with the browser's cookies (not page-side: see whoami).
    const session = async (reason: string) =>
      (await t.context.request.get(`${dash.url}/api/auth/session?refresh=${reason}`)).json();
    const { expires } = await session('interval');
    const before = refreshes();
    dash.clock.advance(10 * MINUTE);
    const later = await session('interval');
    expect(refreshes()).toBe(before + 1);
    expect(later.expires).toBe(expires);
    dash.clock.advance(21 * MINUTE);
    expect(await session('interval')).toEqual({});
    await t.context.close();
  });

  it('send the user to sign-in when they cannot be refreshed', async () => {
    const t = await signIn('frank');
    oidc.forgetEverything(); // the refresh token is no longer valid, and the provider session is gone
    dash.clock.advance(11 * MINUTE);
    expect((await whoami(t)).status).toBe(401);
    // The open page may notice the failed refresh itself and head for sign-in while we navigate:
    // either way the user must end at the provider's login, so an interrupted goto is fine.
    await t.page.goto(`${dash.url}/queries`).catch((err: Error) => {
      if (!/interrupted by another navigation/.test(err.message)) throw err;
    });
    await t.page.waitForSelector('input[name="login"]');
    expect(t.page.url().startsWith(oidc.issuer)).toBe(true);
    await loginAtProvider(t.page, 'frank');
    // Back on the dashboard, signed in again: at /queries, or at the page the open page was on when
    // it headed for sign-in by itself (its callback won the race with the goto).
    const origin = new URL(dash.url).origin;
    await t.page.waitForURL((u) => u.origin === origin && !u.pathname.startsWith('/api/auth'));
    expect((await whoami(t)).status).toBe(200);
    await t.context.close();
  });

  it('a page whose refresh fails on focus goes to sign-in by itself', async () => {
    const t = await signIn('grace');
    await t.page.goto(`${dash.url}/agents`);
    oidc.forgetEverything();
    dash.clock.advance(11 * MINUTE);
    // Chromium may fire a focus of its own (or the page's API calls may see the 401) and start the
    // navigation first; the context our event was meant for is then gone, which is the same outcome.
    await t.page
      .evaluate(() => (globalThis as any).dispatchEvent(new Event('focus')))
      .catch((err: Error) => {
        if (!/Execution context was destroyed|navigat/.test(err.message)) throw err;
      });
    await t.page.waitForSelector('input[name="login"]');
    const signin = t.navigations.findLast((u) => u.includes('/api/auth/signin'));
    expect(signin).toBe(`${dash.url}/api/auth/signin?callbackUrl=%2Fagents`);
    await t.context.close();
  });
});
