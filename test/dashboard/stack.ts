import type { Browser } from 'playwright-core';
import {
  type InteractiveOidc,
  type InteractiveOidcOptions,
  startInteractiveOidc,
} from '../fixtures/oidc/interactive.ts';
import { launchBrowser, loginAtProvider, newContext, type TestContext } from './browser.ts';
import {
  freePort,
  type StubApi,
  ssoEnv,
  startDashboard,
  startStubApi,
  type TestDashboard,
} from './support.ts';

/** An sso dashboard at the root of its origin, its provider, a stub API and a browser. */
export interface BrowserStack {
  oidc: InteractiveOidc;
  api: StubApi;
  dash: TestDashboard;
  browser: Browser;
  /** Signs `login` in from `path`, returning once the browser is back there. */
  signIn(login: string, path?: string): Promise<TestContext>;
  close(): Promise<void>;
}

export async function startBrowserStack(
  oidcOptions: Partial<InteractiveOidcOptions> = {},
): Promise<BrowserStack> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const api = await startStubApi();
  const oidc = await startInteractiveOidc({
    redirectUris: [`${origin}/api/auth/callback/test-idp`],
    postLogoutRedirectUris: [`${origin}/signout`],
    ...oidcOptions,
  });
  const dash = await startDashboard(ssoEnv(oidc, origin, '', api.url), port);
  const browser = await launchBrowser();
  return {
    oidc,
    api,
    dash,
    browser,
    async signIn(login, path = '/') {
      const t = await newContext(browser);
      await t.page.goto(`${dash.url}${path}`);
      await loginAtProvider(t.page, login);
      await t.page.waitForURL(`${dash.url}${path}`);
      return t;
    },
    async close() {
      await browser.close();
      await dash.close();
      await oidc.close();
      await api.close();
    },
  };
}
