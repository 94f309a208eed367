import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page, type Request } from 'playwright-core';
import { ROOT } from '../support/process.ts';

/** Debian's Chromium; `make test` installs it (hack/ensure-chromium.sh) when it is missing. */
export const CHROMIUM = '/usr/bin/chromium';
export const SCREENSHOTS = join(ROOT, 'test-results', 'dashboard');

/** Flags that keep Chromium off the network it must not reach (updates, sync, QUIC probes). */
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `${CHROMIUM} is missing: run \`make test\` (it installs Debian's chromium) or apt-get install chromium`,
    );
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
}

export interface TestContext {
  context: BrowserContext;
  page: Page;
  /** Requests the page tried to make off this machine (each was refused). */
  offMachine: Array<{ url: string; from: string }>;
  /** Every page error (an uncaught exception in a screen's script). */
  pageErrors: string[];
  /** Every navigation request's URL, in order. */
  navigations: string[];
}

/**
 * A fresh browser profile (own cookies). Requests that would leave 127.0.0.1 are refused and
 * recorded: the dashboard must load nothing from a CDN (the provider's own pages import a web font,
 * which is why the origin of each attempt is kept).
 */
export async function newContext(browser: Browser): Promise<TestContext> {
  const context = await browser.newContext();
  const offMachine: TestContext['offMachine'] = [];
  const pageErrors: string[] = [];
  const navigations: string[] = [];
  await context.route(
    (url) => url.hostname !== '127.0.0.1' && url.hostname !== 'localhost',
    (route, request: Request) => {
      offMachine.push({ url: request.url(), from: request.frame().url() });
      return route.abort('blockedbyclient');
    },
  );
  const page = await context.newPage();
  page.on('pageerror', (err) => pageErrors.push(err.message));
  page.on('request', (r) => {
    if (r.isNavigationRequest() && r.frame() === page.mainFrame()) navigations.push(r.url());
  });
  return { context, page, offMachine, pageErrors, navigations };
}

/** Fills the provider's login form (oidc-provider devInteractions) and submits it. */
export async function loginAtProvider(page: Page, login: string): Promise<void> {
  await page.waitForSelector('input[name="login"]');
  await page.fill('input[name="login"]', login);
  await page.fill('input[name="password"]', 'any-password');
  await page.click('button[type="submit"]');
}

/** A screenshot kept under test-results/dashboard/ as an artifact of the run. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}
