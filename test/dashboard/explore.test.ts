/**
 * The acceptance on `berth up` itself (sso, tenant base path `/<namespace>/`, signed in
 * through a real provider in Chromium): the samples all succeed and can be explored — every detail
 * view opened from its list, a trace read as a waterfall (span order and nesting), agents and other
 * kinds created and edited through the generated forms (a server-side validation error shown beside
 * its field), a chat that survives a reload and is reopened from the list, an evaluation run to a
 * score. Screenshots go to test-results/dashboard/ (docs/dashboard.md shows them).
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectl } from '../support/kube.ts';
import { eventually } from '../support/wait.ts';
import { launchBrowser, loginAtProvider, newContext, screenshot, type TestContext } from './browser.ts';
import { startUpStack, type UpStack } from './up-stack.ts';

let s: UpStack;
let browser: Browser;
let t: TestContext;
let page: Page;

const ready = () => page.waitForSelector('body[data-ready="true"]', { timeout: 20_000 });
const open = async (path: string) => {
  await page.goto(`${s.dash}${path}`);
  await ready();
};
/** Clicks a link inside the app (client-side navigation) and waits for the page's data. */
const follow = async (selector: string) => {
  await page.click(selector);
  await page
    .waitForFunction(() => (globalThis as any).document.body.dataset.ready === 'false', null, {
      timeout: 2_000,
    })
    .catch(() => {});
  await ready();
};
const text = (selector: string) => page.locator(selector).first().textContent();

beforeAll(async () => {
  s = await startUpStack({ sso: true });
  browser = await launchBrowser();
  t = await newContext(browser);
  page = t.page;
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto(`${s.dash}/`);
  await loginAtProvider(page, 'alice');
  await page.waitForURL(`${s.dash}/`);
  await s.applySamples();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await s?.close();
});

describe('the samples on berth up', () => {
  it('all succeed, and the dashboard shows them so', async () => {
    const phases = async (kind: string) => {
      const r = await kubectl([
        'get',
        kind,
        '-n',
        s.ns,
        '-o',
        'jsonpath={range .items[*]}{.metadata.name}={.status.phase}{"\\n"}{end}',
      ]);
      return r.stdout.split('\n').filter(Boolean);
    };
    let last: string[] = [];
    await eventually(
      async () => {
        last = [...(await phases('queries')), ...(await phases('evaluations'))];
        return last.length >= 7 && last.every((l) => l.endsWith('=done') || l.endsWith('=input-required'));
      },
      120_000,
      500,
    ).catch((err: Error) => {
      throw new Error(`${err.message}: ${last.join(', ')}`);
    });
    // The approval samples wait for a person: decided here, on the Approvals page.
    const waiting = last.filter((l) => l.endsWith('=input-required')).map((l) => l.split('=')[0]);
    if (waiting.length) {
      await open('/approvals');
      for (const q of waiting) {
        const item = page.locator(`#approvals li.approval[data-query="${q}"]`).first();
        await item.waitFor();
        if (await item.locator('input[name="answer"]').count())
          await item.locator('input[name="answer"]').fill('March');
        await screenshot(page, 'approvals');
        await item.locator('button.approve').click();
        await page
          .locator(`#approvals > li[data-query="${q}"]`)
          .waitFor({ state: 'detached', timeout: 20_000 });
      }
      await eventually(
        async () => {
          last = [...(await phases('queries')), ...(await phases('evaluations'))];
          return last.every((l) => l.endsWith('=done'));
        },
        60_000,
        500,
      ).catch((err: Error) => {
        throw new Error(`${err.message}: ${last.join(', ')}`);
      });
    }
    await open('/queries');
    const rows = await page.locator('#resources tbody tr').count();
    expect(rows).toBeGreaterThanOrEqual(4);
    expect(await page.locator('#resources tbody .phase.error').count()).toBe(0);
    await screenshot(page, 'queries');
    await open('/evaluations');
    expect(await page.locator('#resources .verdict.passed').count()).toBeGreaterThanOrEqual(3);
    await screenshot(page, 'evaluations');
  });
});

describe('detail views, opened from their lists', () => {
  it('a query: answer, tool call with arguments and result, events, its trace and evaluations', async () => {
    await open('/queries');
    await follow('#resources a[href$="/queries/weather"]');
    expect(page.url()).toBe(`${s.dash}/queries/weather`);
    expect(await text('#answer')).toContain('demo result of weather');
    expect(await text('#phase')).toContain('done');
    expect(await text('#tokens')).toMatch(/\d+ \(prompt \d+, completion \d+\)/);
    const call = page.locator('#tool-calls li[data-tool="weather"]');
    expect(JSON.parse((await call.locator('pre.args').textContent()) as string)).toEqual({ city: 'Paris' });
    // The result as the ToolCallComplete event carries it (its start: events cut long values).
    expect(await call.locator('pre.result').textContent()).toContain('{"tool":"weather"');
    await page.waitForSelector('#events li[data-reason="QueryExecutionComplete"]');
    await page.waitForSelector('#query-trace li[data-name="tool.call"]');
    await screenshot(page, 'query');
    await open('/queries/hello');
    await page.waitForSelector('#evaluations tr[data-name="hello-judge"]');
  });

  it('a trace as a waterfall: spans in tree order, children under their parents, in start order', async () => {
    await open('/traces');
    await page.waitForSelector('#traces tbody tr');
    await screenshot(page, 'traces');
    const row = page.locator('#traces tbody tr', { hasText: 'weather' }).first();
    await row.locator('a').first().click();
    await ready();
    await page.waitForSelector('#waterfall li[data-name="tool.call"]');
    const spans = await page.locator('#waterfall li.wf-row').evaluateAll((lis) =>
      lis.map((li) => ({
        name: li.getAttribute('data-name'),
        id: li.getAttribute('data-span-id'),
        parent: li.getAttribute('data-parent'),
        depth: Number(li.getAttribute('data-depth')),
      })),
    );
    const byName = (n: string) => spans.filter((x) => x.name === n);
    const [root] = spans;
    expect(root).toMatchObject({ name: 'query', depth: 0 });
    const agent = byName('agent.execution')[0];
    expect(agent).toMatchObject({ parent: root?.id, depth: 1 });
    const underAgent = spans.filter((x) => x.parent === agent?.id).map((x) => x.name);
    // The model asked for the tool, the tool answered, the model answered: in that order.
    expect(underAgent).toEqual(['llm.call', 'tool.call', 'llm.call']);
    for (const child of spans.filter((x) => x.parent === agent?.id)) expect(child.depth).toBe(2);
    // Each span comes after its parent (tree order).
    for (const [i, x] of spans.entries())
      if (x.parent) expect(spans.findIndex((p) => p.id === x.parent)).toBeLessThan(i);
    await page.click('#waterfall li[data-name="tool.call"] button');
    expect(await text('#waterfall li[data-name="tool.call"] .wf-detail')).toContain('berth.tool');
    await screenshot(page, 'trace');
  });

  it('a session as its transcript, with its queries', async () => {
    await open('/sessions');
    await page.waitForSelector('#sessions tr[data-session="sample-session"]');
    await follow('#sessions tr[data-session="sample-session"] a');
    await page.waitForSelector('#session-queries tr[data-query="weather"]');
    await page
      .waitForFunction(
        () =>
          (globalThis as any).document
            .querySelector('main')
            ?.textContent.includes('What is the weather in Paris?'),
        null,
        { timeout: 45_000 },
      )
      .catch(async (err: Error) => {
        await screenshot(page, 'session-failed');
        throw new Error(`${err.message}; the page said: ${(await text('main'))?.slice(0, 1500)}`);
      });
    await screenshot(page, 'session');
  });

  it('agents, teams, models, tools, memories, MCP servers and evaluators, with the queries that used them', async () => {
    const cases: Array<[string, string, string]> = [
      ['agents', 'assistant', '#used-by tr[data-name="weather"]'],
      ['teams', 'reviewers', '#used-by tr[data-name="team-hello"]'],
      ['models', 'demo', '#used-by'],
      ['tools', 'weather', '#used-by'],
      ['memories', 'default', '#used-by'],
      ['mcp-servers', 'demo-tools', '.conditions'],
      ['evaluators', 'reference', '#used-by li'],
    ];
    for (const [section, name, shows] of cases) {
      await open(`/${section}`);
      await follow(`#${section === 'mcp-servers' ? 'servers' : 'resources'} tr[data-name="${name}"] a`);
      expect(page.url(), section).toBe(`${s.dash}/${section}/${name}`);
      await page.waitForSelector(shows, { timeout: 10_000 });
      expect(await text('h1'), section).toBe(name);
    }
    await open('/agents/assistant');
    await screenshot(page, 'agent');
  });

  it('an evaluation: score, verdict, reasoning', async () => {
    await open('/evaluations');
    await follow('#resources tr[data-name="hello-judge"] a');
    expect(await text('#score')).toBe('1.00');
    expect(await text('#passed')).toBe('passed');
    expect(await text('#reasoning')).toContain('[demo model]');
  });
});

describe('create and edit through the forms', () => {
  it('shows the server’s validation message beside the field, then creates and edits an agent', async () => {
    await open('/agents');
    await follow('#new');
    await page.waitForSelector('#resource-form');
    await page.fill('input[name="name"]', 'helper');
    await page.fill('textarea[name="spec.prompt"]', '');
    await page.click('#save');
    const error = page.locator('.field-error[data-for="spec.prompt"]');
    await error.waitFor();
    expect(await error.textContent()).toMatch(/expected string|too small|required/i);
    await screenshot(page, 'form-error');
    await page.fill('textarea[name="spec.prompt"]', 'You help with the weather.');
    await page.fill('textarea[name="spec.description"]', 'Helps');
    await page.click('#save');
    await page.waitForURL(`${s.dash}/agents/helper`);
    await ready();
    await page.click('#tab-edit');
    await page.fill('textarea[name="spec.description"]', 'Helps, edited');
    await page.click('#save');
    await page.waitForSelector('#tab-overview[aria-selected="true"]');
    await eventually(async () => (await text('.kv'))?.includes('Helps, edited') ?? false, 10_000, 100);
    const got = await kubectl(['get', 'agent', 'helper', '-n', s.ns, '-o', 'jsonpath={.spec.description}']);
    expect(got.stdout).toBe('Helps, edited');
  });

  it('creates a model, a tool, a memory, a team and a query, and edits one through its YAML', async () => {
    const create = async (section: string, name: string, fill: Record<string, string>) => {
      await open(`/${section}/new`);
      await page.waitForSelector('#resource-form');
      await page.fill('input[name="name"]', name);
      for (const [field, value] of Object.entries(fill)) {
        const el = page.locator(`[name="${field}"]`);
        if ((await el.evaluate((e) => e.tagName)) === 'SELECT') await el.selectOption(value);
        else await el.fill(value);
      }
      await page.click('#save');
      await page.waitForURL(`${s.dash}/${section}/${name}`, { timeout: 10_000 });
      await ready();
    };
    await create('models', 'judge', { 'spec.type': 'demo', 'spec.model': 'berth-demo', 'spec.baseUrl': '' });
    await create('tools', 'lookup', { 'spec.http.url': 'https://tools.example.com/lookup' });
    await create('memories', 'notes', { 'spec.address.value': 'http://127.0.0.1:1/' });
    await create('teams', 'pair', { 'spec.members.0.type': 'agent', 'spec.members.0.name': 'helper' });
    await create('queries', 'asked', {
      'spec.input': 'Hello from a form',
      'spec.target.type': 'agent',
      'spec.target.name': 'helper',
    });
    await page.waitForFunction(
      () => (globalThis as any).document.querySelector('#answer')?.textContent?.includes('Hello from a form'),
      null,
      { timeout: 30_000 },
    );
    // YAML edit of the tool.
    await open('/tools/lookup');
    await page.click('#tab-yaml');
    await page.click('#yaml-edit');
    // The editor opens with the editable YAML (no status, no server-managed metadata) already in it:
    // it used to show the view's text first and replace it a moment later, over what was typed.
    const editor = await page.waitForSelector('textarea#yaml-text');
    const opened = await editor.inputValue();
    expect(opened).toContain('https://tools.example.com/lookup');
    expect(opened).not.toMatch(/^(status|\s+uid|\s+managedFields):/m);
    await page.fill(
      'textarea#yaml-text',
      opened.replace('https://tools.example.com/lookup', 'https://tools.example.com/v2'),
    );
    await page.click('#yaml-save');
    await eventually(
      async () => {
        const r = await kubectl(['get', 'tool', 'lookup', '-n', s.ns, '-o', 'jsonpath={.spec.http.url}']);
        return r.stdout === 'https://tools.example.com/v2';
      },
      10_000,
      200,
    );
    // Delete with confirmation.
    page.once('dialog', (d) => void d.accept());
    await page.click('#delete');
    await page.waitForURL(`${s.dash}/tools`);
    await eventually(
      async () => (await kubectl(['get', 'tool', 'lookup', '-n', s.ns])).code !== 0,
      10_000,
      200,
    );
  });
});

describe('chat that remembers', () => {
  it('streams an answer, keeps the conversation across a reload and reopens it from the list', async () => {
    await open('/chat');
    await page.selectOption('#target', 'agent/assistant');
    await page.fill('textarea[name="content"]', 'What is the weather in Lisbon?');
    await page.click('#chat-form button[type="submit"]');
    await page.waitForURL(/\/chat\/[0-9a-f-]{8,}$/, { timeout: 30_000 });
    const conversation = decodeURIComponent(page.url().split('/').at(-1) as string);
    await ready();
    await page.waitForFunction(() =>
      (globalThis as any).document
        .querySelector('#messages li.assistant')
        ?.textContent?.includes('demo result of weather'),
    );
    await screenshot(page, 'chat');
    await page.reload();
    await ready();
    await page.waitForFunction(
      () => (globalThis as any).document.querySelectorAll('#messages li.assistant').length === 1,
    );
    expect(await text('#messages li.user')).toBe('What is the weather in Lisbon?');
    // The conversation goes on where it was: the demo model sees the earlier turn in its history.
    await page.fill('textarea[name="content"]', 'Thanks!');
    await page.click('#chat-form button[type="submit"]');
    await page.waitForFunction(
      () =>
        (globalThis as any).document.querySelectorAll('#messages li.assistant').length === 2 &&
        !(globalThis as any).document.querySelector('#stop'),
      null,
      { timeout: 30_000 },
    );
    expect(await page.locator('#messages li.assistant').nth(1).textContent()).toContain('You said: Thanks!');
    await open('/chat');
    await page.waitForSelector(`#conversations li[data-conversation="${conversation}"]`);
    expect(await page.locator(`#conversations li[data-conversation="${conversation}"]`).count()).toBe(1);
    await follow(`#conversations li[data-conversation="${conversation}"] a`);
    await page.waitForFunction(
      () => (globalThis as any).document.querySelectorAll('#messages li.assistant').length === 2,
    );
    expect(t.pageErrors).toEqual([]);
  });
});

describe('evaluations', () => {
  it('runs a direct evaluation to a score and reruns it', async () => {
    await open('/evaluations/new');
    await page.fill('input[name="name"]', 'capital');
    await page.fill('textarea[name="parameters"]', 'mode=contains\nexpected=Paris');
    await page.fill('textarea[name="input"]', 'What is the capital of France?');
    await page.fill('textarea[name="output"]', 'It is Paris.');
    await page.click('#save');
    await page.waitForURL(`${s.dash}/evaluations/capital`);
    await page.waitForFunction(
      () => (globalThis as any).document.querySelector('#score')?.textContent === '1.00',
      null,
      {
        timeout: 30_000,
      },
    );
    expect(await text('#passed')).toBe('passed');
    await screenshot(page, 'evaluation');
    await page.click('#rerun');
    await page.waitForURL(/\/evaluations\/capital-[a-z0-9]+$/);
    await page.waitForFunction(
      () => (globalThis as any).document.querySelector('#score')?.textContent === '1.00',
      null,
      {
        timeout: 30_000,
      },
    );
  });

  it('a direct evaluation without output is refused with the message beside the field', async () => {
    await open('/evaluations/new');
    await page.fill('input[name="name"]', 'incomplete');
    await page.fill('textarea[name="input"]', 'q');
    await page.click('#save');
    await page.waitForSelector('.field-error[data-for="config.output"]');
  });
});

describe('the whole run', () => {
  it('had no script error, loaded nothing from elsewhere, and every page kept the strict CSP', async () => {
    expect(t.pageErrors).toEqual([]);
    expect(t.offMachine.filter((r) => r.from.startsWith(s.origin))).toEqual([]);
    const res = await page.request.get(`${s.dash}/queries/weather`);
    expect(res.headers()['content-security-policy']).toContain("script-src 'self'");
    expect(await res.text()).not.toMatch(/<script(?![^>]*\bsrc=)|style=/);
    await page.emulateMedia({ colorScheme: 'dark' });
    await open('/queries/weather');
    await screenshot(page, 'query-dark');
    await page.setViewportSize({ width: 390, height: 800 });
    await open('/queries');
    expect(await page.isVisible('#nav')).toBe(false);
    await page.click('#menu');
    expect(await page.isVisible('#nav')).toBe(true);
    await screenshot(page, 'narrow');
  });
});
