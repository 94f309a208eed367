import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../log/index.ts';
import { demoMcpApp, type RunningDemoMcp, startDemoMcpServer } from './server.ts';
import { countWords, timeOf } from './tools.ts';

const logger = createLogger({ level: 'silent' });
let demo: RunningDemoMcp;
beforeAll(async () => {
  demo = await startDemoMcpServer({ port: 0, logger });
});
afterAll(async () => {
  await demo?.close();
});

type Call = (
  name: string,
  args: Record<string, unknown>,
) => Promise<{ content?: unknown; structuredContent?: unknown }>;

/** A connected client of each SDK and revision: what it negotiated, its tool names and a call. */
async function clients() {
  const url = new URL(demo.url);
  const out: Array<{
    label: string;
    version?: string;
    tools: string[];
    call: Call;
    close: () => Promise<void>;
  }> = [];
  for (const mode of [{ pin: '2026-07-28' }, 'legacy'] as const) {
    const c = new Client({ name: 't', version: '1' }, { versionNegotiation: { mode } });
    await c.connect(new StreamableHTTPClientTransport(url));
    out.push({
      label: `client 2.x ${JSON.stringify(mode)}`,
      version: c.getNegotiatedProtocolVersion(),
      tools: (await c.listTools()).tools.map((t) => t.name),
      call: (name, args) => c.callTool({ name, arguments: args }),
      close: () => c.close(),
    });
  }
  const v1 = new ClientV1({ name: 't', version: '1' });
  const t1 = new TransportV1(url);
  await v1.connect(t1);
  out.push({
    label: 'sdk 1.x',
    version: t1.protocolVersion,
    tools: (await v1.listTools()).tools.map((t) => t.name),
    call: (name, args) => v1.callTool({ name, arguments: args }) as ReturnType<Call>,
    close: () => v1.close(),
  });
  return out;
}

describe('the demo MCP server', () => {
  it('serves both revisions to the official clients, with deterministic tools', async () => {
    const all = await clients();
    try {
      expect(all.map((c) => c.version)).toEqual(['2026-07-28', '2025-11-25', '2025-11-25']);
      for (const c of all) {
        expect(c.tools.sort(), c.label).toEqual(['echo', 'get_time', 'word_count']);
        expect(await c.call('echo', { text: 'hello  there' })).toMatchObject({
          content: [{ type: 'text', text: 'hello  there' }],
        });
        expect(await c.call('word_count', { text: ' the quick\nbrown  fox ' })).toMatchObject({
          content: [{ type: 'text', text: '4 words' }],
          structuredContent: { words: 4 },
        });
        const time = (await c.call('get_time', {})).content as Array<{ text: string }>;
        expect(time[0]?.text).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
      }
    } finally {
      await Promise.all(all.map((c) => c.close()));
    }
  });

  it('counts and formats as documented', () => {
    expect([countWords(''), countWords('   '), countWords('a b\tc\nd')]).toEqual([0, 0, 4]);
    expect(timeOf(new Date(Date.UTC(2026, 6, 28, 9, 30, 5, 123)))).toBe('2026-07-28T09:30:05Z');
  });

  it('refuses hostile requests with a 4xx', async () => {
    const post = (body: string, headers: Record<string, string> = {}) =>
      fetch(demo.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        body,
      });
    const statuses = [
      (await post('{"jsonrpc":')).status,
      (await post(`{"a":${'['.repeat(5000)}${']'.repeat(5000)}}`)).status,
      (await post(' '.repeat(2 * 1024 * 1024))).status,
      (await post('{}', { 'content-type': 'text/plain' })).status,
      (await post('{}', { origin: 'https://evil.example' })).status,
      (await post('[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]')).status,
      (await post('{"jsonrpc":"2.0","id":1,"method":"evil/method"}')).status,
    ];
    expect(statuses).toEqual([400, 400, 413, 415, 403, expect.any(Number), expect.any(Number)]);
    for (const s of statuses) expect(s).toBeLessThan(500);
    // A rebinding page reaches it under another host name: refused before the SDK.
    const { app } = demoMcpApp(logger);
    const rebound = await app.request('/mcp', {
      method: 'POST',
      headers: { host: 'evil.example:8090', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(rebound.status).toBe(403);
  });
});
