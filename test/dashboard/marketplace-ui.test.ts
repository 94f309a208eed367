/**
 * The marketplace screen in a real browser, signed in as two users through the provider: the
 * add/edit/delete controls appear only when the permissions probe says `canEdit` (here the stub API
 * answers from the bearer token's subject, as the real one answers from the user's RBAC), items are
 * shown with each source's error inline, and a missing marketplace API is tolerated.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { screenshot, type TestContext } from './browser.ts';
import { type BrowserStack, startBrowserStack } from './stack.ts';
import { json, type SeenRequest, type StubApi } from './support.ts';

const base = '/v1/namespaces/stub-ns';
let stack: BrowserStack;
let api: StubApi;
let available = true;
let permissionsFail = false;
const sources = [
  { name: 'public', url: 'https://catalogue.example/marketplace.json', displayName: 'Public catalogue' },
  {
    name: 'private',
    url: 'https://private.example/m.json',
    displayName: 'Private',
    auth: { scheme: 'bearer', secretRef: 'marketplace-source-private-auth' },
  },
];

/** The `sub` of the bearer JWT the proxy forwarded. */
const subjectOf = (r: SeenRequest) =>
  JSON.parse(Buffer.from((r.headers.authorization ?? '').split('.')[1] ?? '', 'base64url').toString() || '{}')
    .sub;

beforeAll(async () => {
  stack = await startBrowserStack();
  ({ api } = stack);
  const gone = (res: Parameters<Parameters<StubApi['on']>[1]>[1]) =>
    json(res, 404, { error: { code: 'not_found', message: 'no route' } });
  api.on(`${base}/marketplace-sources`, (r, res) => {
    if (!available) return gone(res);
    if (r.method === 'POST') {
      const body = JSON.parse(r.body);
      sources.push({ name: body.name, url: body.url, displayName: body.displayName });
      return json(res, 201, body);
    }
    json(res, 200, { items: sources });
  });
  api.on(`${base}/marketplace-sources/permissions`, (r, res) => {
    if (!available) return gone(res);
    if (permissionsFail) return json(res, 500, { error: { code: 'internal', message: 'boom' } });
    json(res, 200, { canEdit: subjectOf(r) === 'editor' });
  });
  api.on(`${base}/marketplace-items`, (_r, res) => {
    if (!available) return gone(res);
    json(res, 200, {
      items: [{ name: 'weather-agent', type: 'agent', description: 'Tells the weather', source: 'public' }],
      sources: [
        { ...sources[0], itemCount: 1 },
        {
          ...sources[1],
          itemCount: 0,
          error: { code: 'auth_error', message: 'the credential is not readable' },
        },
      ],
    });
  });
});

afterAll(() => stack?.close());

async function openMarketplace(login: string): Promise<TestContext> {
  const t = await stack.signIn(login, '/marketplace');
  await t.page.waitForSelector('body[data-ready="true"]');
  return t;
}

describe('the marketplace screen', () => {
  it('hides add, edit and delete from a reader, and shows items with per-source errors', async () => {
    const t = await openMarketplace('reader');
    await screenshot(t.page, 'marketplace-reader');
    expect(await t.page.isVisible('#add-source')).toBe(false);
    expect(await t.page.locator('#sources button').count()).toBe(0);
    expect(await t.page.locator('#sources tbody tr').allTextContents()).toEqual([
      expect.stringContaining('Public catalogue'),
      expect.stringContaining('bearer'),
    ]);
    expect(await t.page.textContent('#items tbody')).toContain('weather-agent');
    expect(await t.page.textContent('#source-errors')).toBe(
      'Private: auth_error — the credential is not readable',
    );
    expect(t.pageErrors).toEqual([]);
    await t.context.close();
  });

  it('shows the controls to an editor, whose new source is posted to the API', async () => {
    const t = await openMarketplace('editor');
    await screenshot(t.page, 'marketplace-editor');
    expect(await t.page.isVisible('#add-source')).toBe(true);
    expect(await t.page.locator('#sources button.edit').count()).toBe(2);
    await t.page.click('#add-source');
    await t.page.fill('input[name="name"]', 'team');
    await t.page.fill('input[name="url"]', 'https://team.example/marketplace.json');
    await t.page.selectOption('select[name="scheme"]', 'bearer');
    await t.page.fill('input[name="credential"]', 'catalogue-token-123');
    await t.page.click('#source-form button[type="submit"]');
    await t.page.waitForSelector('#sources tr[data-source="team"]');
    const post = api.seen.findLast((r) => r.method === 'POST');
    expect(JSON.parse(post?.body ?? '{}')).toEqual({
      name: 'team',
      url: 'https://team.example/marketplace.json',
      auth: { scheme: 'bearer', credential: 'catalogue-token-123' },
    });
    expect(subjectOf(post as SeenRequest)).toBe('editor');
    await t.context.close();
  });

  it('fails closed: a permissions probe that errors hides the controls', async () => {
    permissionsFail = true;
    try {
      const t = await openMarketplace('editor');
      expect(await t.page.isVisible('#add-source')).toBe(false);
      await t.context.close();
    } finally {
      permissionsFail = false;
    }
  });

  it('says so when the API service has no marketplace, without a script error', async () => {
    available = false;
    try {
      const t = await openMarketplace('reader');
      expect(await t.page.textContent('#sources-status')).toBe(
        'The marketplace is not available on this API service.',
      );
      expect(await t.page.isVisible('#add-source')).toBe(false);
      expect(t.pageErrors).toEqual([]);
      await t.context.close();
    } finally {
      available = true;
    }
  });
});
