/**
 * Signing out in a real browser: the federated sign-out ends the provider's session too (the
 * provider's end_session_endpoint with id_token_hint, post_logout_redirect_uri and client_id).
 * Both sign-outs are CSRF-protected POSTs; a GET signs no one out (405).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InteractiveOidc } from '../fixtures/oidc/interactive.ts';
import { newContext, screenshot, type TestContext } from './browser.ts';
import { type BrowserStack, startBrowserStack } from './stack.ts';
import type { TestDashboard } from './support.ts';

let stack: BrowserStack;
let oidc: InteractiveOidc;
let dash: TestDashboard;

beforeAll(async () => {
  stack = await startBrowserStack();
  ({ oidc, dash } = stack);
});

afterAll(() => stack?.close());

const signIn = (login: string) => stack.signIn(login);

const sessionCookies = async (t: TestContext) =>
  (await t.context.cookies()).filter((c) => c.name.startsWith('berth.session-token'));

describe('federated sign-out', () => {
  it('ends the dashboard session and the provider session, landing on /signout', async () => {
    const t = await signIn('alice');
    const idToken = oidc.issued.at(-1)?.idToken;
    expect(idToken).toMatch(/^eyJ/);
    await t.page.click('#sign-out');
    await t.page.waitForURL((u) => u.href.startsWith(`${oidc.issuer}/session/end`));
    const endSession = new URL(
      t.navigations.find((u) => u.startsWith(`${oidc.issuer}/session/end`)) as string,
    );
    expect(Object.fromEntries(endSession.searchParams)).toEqual({
      id_token_hint: idToken,
      post_logout_redirect_uri: `${dash.url}/signout`,
      client_id: oidc.clientId,
    });
    // The dashboard's cookie went with the redirect, before the provider even answered.
    expect(await sessionCookies(t)).toEqual([]);
    await t.page.click('button[name="logout"][value="yes"]');
    await t.page.waitForURL(`${dash.url}/signout`);
    await screenshot(t.page, 'signed-out');
    expect(await t.page.textContent('main')).toContain('You are signed out');
    // The provider forgot the user too: signing in again asks for a login.
    await t.page.click('#sign-in-again');
    await t.page.waitForSelector('input[name="login"]');
    expect(t.page.url().startsWith(oidc.issuer)).toBe(true);
    await t.context.close();
  });

  it('with no session, goes to the provider without a hint (the provider asks) and still clears cookies', async () => {
    const t = await newContext(stack.browser);
    const csrf = (await (await t.context.request.get(`${dash.url}/api/auth/csrf`)).json()).csrfToken;
    const res = await t.context.request.post(`${dash.url}/api/auth/federated-signout`, {
      form: { csrfToken: csrf },
      maxRedirects: 0,
    });
    expect(res.status()).toBe(303);
    const to = new URL(res.headers().location as string);
    expect(to.origin + to.pathname).toBe(`${oidc.issuer}/session/end`);
    expect(to.searchParams.has('id_token_hint')).toBe(false);
    expect(to.searchParams.get('post_logout_redirect_uri')).toBe(`${dash.url}/signout`);
    await t.context.close();
  });
});

describe('sign-out is a POST', () => {
  it.each(['signout', 'federated-signout'])(
    'GET /api/auth/%s is a 405 and signs no one out',
    async (route) => {
      const t = await signIn('dave');
      // A top-level navigation, as a link on another site would start it.
      const res = await t.page.goto(`${dash.url}/api/auth/${route}`);
      expect(res?.status()).toBe(405);
      expect(await res?.headerValue('allow')).toBe('POST');
      expect(await t.page.textContent('#error-message')).toContain('POST');
      expect((await sessionCookies(t)).length).toBeGreaterThan(0);
      await t.page.goto(`${dash.url}/agents`);
      expect(await t.page.textContent('#user-name')).toBe('User dave');
      await t.context.close();
    },
  );

  it('refuses a federated sign-out POST without the CSRF token', async () => {
    const t = await signIn('erin');
    const res = await t.context.request.post(`${dash.url}/api/auth/federated-signout`, {
      form: { csrfToken: 'guessed' },
      maxRedirects: 0,
    });
    expect(res.status()).toBe(403);
    expect((await sessionCookies(t)).length).toBeGreaterThan(0);
    await t.context.close();
  });
});

describe('local sign-out', () => {
  it('is a POST carrying the CSRF token, and ends only the dashboard session', async () => {
    const t = await signIn('bob');
    // From a page without the app: the app, on its next API call after the sign-out, would go to
    // sign in again by itself, and that navigation would race (and abort) the test's own below.
    await t.page.goto(`${dash.url}/signout`);
    // As a script of the page would (NextAuth's signOut()): the token from /api/auth/csrf, then a form POST.
    const landed = await t.page.evaluate(async (auth) => {
      const { csrfToken } = await (await fetch(`${auth}/csrf`)).json();
      const res = await fetch(`${auth}/signout`, {
        method: 'POST',
        body: new URLSearchParams({ csrfToken, callbackUrl: '/signout' }),
      });
      return res.url;
    }, `${dash.url}/api/auth`);
    expect(landed).toBe(`${dash.url}/signout`);
    expect(await sessionCookies(t)).toEqual([]);
    // The provider still knows bob: signing in again needs no login.
    await t.page.goto(`${dash.url}/agents`);
    await t.page.waitForURL(`${dash.url}/agents`);
    expect(await t.page.textContent('#user-name')).toBe('User bob');
    await t.context.close();
  });

  it('refuses a sign-out POST without the CSRF token (another site cannot sign users out)', async () => {
    const t = await signIn('carol');
    const res = await t.context.request.post(`${dash.url}/api/auth/signout`, {
      form: { csrfToken: 'guessed', callbackUrl: '/signout' },
      maxRedirects: 0,
    });
    expect(res.status()).toBe(403);
    expect((await res.json()).error.code).toBe('csrf_token_invalid');
    expect((await sessionCookies(t)).length).toBeGreaterThan(0);
    const csrf = (await (await t.context.request.get(`${dash.url}/api/auth/csrf`)).json()).csrfToken;
    const ok = await t.context.request.post(`${dash.url}/api/auth/signout`, {
      form: { csrfToken: csrf, callbackUrl: 'https://evil.example/' },
      maxRedirects: 0,
    });
    expect(ok.status()).toBe(302);
    expect(ok.headers().location).toBe('/'); // the foreign callback fell back to the dashboard
    await t.context.close();
  });
});
