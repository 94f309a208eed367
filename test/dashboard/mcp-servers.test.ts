/**
 * The dashboard's MCP servers page (issue 29 item 5), read-only, in headless Chromium: the real
 * dashboard in `open` mode proxying the real API service, which lists MCPServers of its namespace
 * through `GET /v1/namespaces/{ns}/mcpservers` (no writes offered there). The status is written
 * here through the status subresource, as the controller's discovery writes it, so the page shows
 * exactly what is asserted. A screenshot is kept under test-results/dashboard/.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_VERSION, berthScheme, Kinds, type MCPServer } from '../../pkg/api/index.ts';
import { createClient } from '../../pkg/kube/client/index.ts';
import { startService, type TestService } from '../gateway/support.ts';
import { createNamespace, kubeConfig } from '../support/kube.ts';
import { launchBrowser, newContext, screenshot, type TestContext } from './browser.ts';
import { startDashboard, type TestDashboard } from './support.ts';

let ns: string;
let api: TestService;
let dash: TestDashboard;
let browser: Browser;
let t: TestContext;

const admin = () => createClient({ kc: kubeConfig('admin'), scheme: berthScheme() });

async function server(name: string, address: string, status: MCPServer['status']) {
  const c = admin();
  const obj = {
    apiVersion: API_VERSION,
    kind: 'MCPServer',
    metadata: { name, namespace: ns },
    spec: { address: { value: address } },
  };
  await c.create(Kinds.MCPServer, obj as MCPServer);
  await c.status().patch(Kinds.MCPServer, { namespace: ns, name }, { type: 'merge', patch: { status } });
}

beforeAll(async () => {
  ns = await createNamespace('dash-mcp');
  await server('demo-tools', 'http://127.0.0.1:8090/mcp', {
    phase: 'ready',
    protocolVersion: '2026-07-28',
    lastResolvedAddress: 'http://127.0.0.1:8090/mcp',
    toolCount: 2,
    tools: [
      {
        name: 'word_count',
        description: 'Counts the whitespace-separated words of a text',
        inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
        annotations: { readOnlyHint: true, idempotentHint: true },
      },
      {
        name: 'wipe',
        description: '<img src=x onerror="window.owned=1">Deletes everything',
        inputSchema: {
          type: 'object',
          properties: { confirm: { type: 'boolean' }, scope: { type: 'string' } },
        },
        annotations: { destructiveHint: true },
      },
    ],
    conditions: [
      {
        type: 'Available',
        status: 'True',
        reason: 'Discovered',
        message: '2 tools',
        lastTransitionTime: new Date().toISOString(),
      },
    ],
  });
  await server('legacy-down', 'http://127.0.0.1:1/mcp', {
    phase: 'error',
    message: 'discovery failed: connect ECONNREFUSED 127.0.0.1:1',
    conditions: [
      {
        type: 'Available',
        status: 'False',
        reason: 'Unreachable',
        message: 'connect ECONNREFUSED',
        lastTransitionTime: new Date().toISOString(),
      },
    ],
  });
  api = await startService({ namespace: ns });
  dash = await startDashboard({ AUTH_MODE: 'open', API_SERVICE_URL: api.url });
  browser = await launchBrowser();
  t = await newContext(browser);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await dash?.close();
  await api?.close();
});

describe('the MCP servers page', () => {
  it('lists each server with its phase, revision, tool count and address, and every tool', async () => {
    await t.page.goto(`${dash.url}/mcp-servers`);
    await t.page.waitForSelector('body[data-ready="true"]');
    const cells = async (selector: string) =>
      t.page.locator(`${selector} td`).evaluateAll((tds) => tds.map((td) => td.textContent));
    expect(await cells('#servers tr[data-name="demo-tools"]')).toEqual([
      'demo-tools',
      'ready',
      '2026-07-28',
      '2',
      'http://127.0.0.1:8090/mcp',
      '',
    ]);
    expect(await cells('#servers tr[data-name="legacy-down"]')).toEqual([
      'legacy-down',
      'error',
      '',
      '',
      'http://127.0.0.1:1/mcp',
      'discovery failed: connect ECONNREFUSED 127.0.0.1:1',
    ]);
    expect(await cells('#tools tr[data-tool="word_count"]')).toEqual([
      'demo-tools',
      'word_count',
      'Counts the whitespace-separated words of a text',
      'read-only, idempotent',
      'text*',
    ]);
    // A server's description is text, never markup.
    expect(await cells('#tools tr[data-tool="wipe"]')).toContain(
      '<img src=x onerror="window.owned=1">Deletes everything',
    );
    expect(await t.page.evaluate(() => (globalThis as { owned?: number }).owned)).toBeUndefined();
    expect(await t.page.textContent('#list-status')).toBe(`2 in ${ns}`);
    // Read-only: nothing on the page writes.
    expect(await t.page.locator('main form, main input, main textarea').count()).toBe(0);
    await screenshot(t.page, 'mcp-servers');
    expect(t.pageErrors).toEqual([]);
    expect(t.offMachine).toEqual([]);
  });

  it('is in the navigation, and the API offers no writes for MCP servers', async () => {
    await t.page.goto(`${dash.url}/`);
    expect(await t.page.locator('nav a[href="/mcp-servers"]').count()).toBe(1);
    const one = await fetch(`${api.url}/v1/namespaces/${ns}/mcpservers/demo-tools`);
    expect(one.status).toBe(200);
    expect((await one.json()).status.toolCount).toBe(2);
    expect((await fetch(`${api.url}/v1/namespaces/${ns}/mcpservers/nope`)).status).toBe(404);
    for (const [method, path] of [
      ['POST', `/v1/namespaces/${ns}/mcpservers`],
      ['PUT', `/v1/namespaces/${ns}/mcpservers/demo-tools`],
      ['PATCH', `/v1/namespaces/${ns}/mcpservers/demo-tools`],
      ['DELETE', `/v1/namespaces/${ns}/mcpservers/demo-tools`],
    ] as const) {
      const res = await fetch(`${api.url}${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        body: method === 'DELETE' ? undefined : JSON.stringify({ spec: { address: { value: 'http://x' } } }),
      });
      expect(res.status, `${method} ${path}`).toBeGreaterThanOrEqual(400);
      expect(res.status, `${method} ${path}`).toBeLessThan(500);
    }
    expect((await fetch(`${api.url}/v1/namespaces/${ns}/mcpservers/demo-tools`)).status).toBe(200);
  });
});
