/**
 * The MCP client against real servers over real HTTP: one built with each official SDK (2026-07-28
 * with @modelcontextprotocol/server 2.x, 2025-11-25 with @modelcontextprotocol/sdk 1.x), and hostile
 * endpoints (garbage, silence, endless pagination, requests for input, a dying server, redirects).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HostileMcpServer, startHostileMcpServer } from '../../../test/fixtures/mcp/hostile-server.ts';
import { type LegacyMcpServer, startLegacyMcpServer } from '../../../test/fixtures/mcp/legacy-server.ts';
import { type ModernMcpServer, startModernMcpServer } from '../../../test/fixtures/mcp/modern-server.ts';
import { createHttpClient, type HttpClient } from '../http.ts';
import { McpClient, type McpEndpoint, McpFailure } from './index.ts';

let http: HttpClient;
let mcp: McpClient;
let modern: ModernMcpServer;
let legacy: LegacyMcpServer;
let hostile: HostileMcpServer;

const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const never = () => new AbortController().signal;

function ep(url: string, extra: Partial<McpEndpoint> = {}): McpEndpoint {
  return {
    label: 'MCPServer test/srv',
    url,
    headers: { authorization: 'Bearer mcp-secret-value' },
    timeoutMs: 5000,
    timeoutText: '5s',
    maxRetries: 2,
    ...extra,
  };
}

async function failure(p: Promise<unknown>): Promise<McpFailure> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(McpFailure);
  return err as McpFailure;
}

async function until(cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeAll(async () => {
  http = createHttpClient();
  mcp = new McpClient(http, { retryBaseMs: 20 });
  [modern, legacy, hostile] = await Promise.all([
    startModernMcpServer(),
    startLegacyMcpServer(),
    startHostileMcpServer(),
  ]);
});

afterAll(async () => {
  await mcp?.close();
  await Promise.all([modern?.close(), legacy?.close(), hostile?.close()]);
  await http?.close();
});

const servers = () => [
  { revision: '2026-07-28', era: 'modern', s: modern as ModernMcpServer | LegacyMcpServer },
  { revision: '2025-11-25', era: 'legacy', s: legacy as ModernMcpServer | LegacyMcpServer },
];

describe.each(['2026-07-28', '2025-11-25'])('a server of revision %s', (revision) => {
  const server = () => servers().find((x) => x.revision === revision) as ReturnType<typeof servers>[number];

  it('discovers its tools with schemas and annotations, and the revision it speaks', async () => {
    const d = await mcp.discover(ep(server().s.url), never());
    expect(d.protocolVersion).toBe(revision);
    expect(d.era).toBe(server().era);
    expect(d.serverInfo?.name).toMatch(/^fixture-/);
    expect(d.tools.map((t) => t.name)).toEqual(['echo', 'add', 'whoami', 'slow', 'fail', 'big']);
    const echo = d.tools[0];
    expect(echo?.inputSchema).toMatchObject({ type: 'object', properties: { text: { type: 'string' } } });
    expect(echo?.annotations).toMatchObject({ readOnlyHint: true });
  });

  it('calls a tool with the trace context in _meta and the configured headers', async () => {
    const out = await mcp.callTool(
      ep(server().s.url),
      'echo',
      { text: 'hi' },
      {
        signal: never(),
        meta: { traceparent: TRACEPARENT },
      },
    );
    expect(out).toEqual({ text: `echo(${revision}): hi`, isError: false, protocolVersion: revision });
    const seen = server().s.rec.calls.at(-1);
    expect(seen?.traceparent).toBe(TRACEPARENT);
    expect(seen?.headers.authorization).toBe('Bearer mcp-secret-value');
  });

  it('never hands back a header value the server echoes', async () => {
    const out = await mcp.callTool(ep(server().s.url), 'whoami', {}, { signal: never() });
    expect(out.text).toContain('"authorization":"[redacted]"');
    expect(out.text).not.toContain('mcp-secret-value');
  });

  it("reports the tool's own error as an error result", async () => {
    const out = await mcp.callTool(ep(server().s.url), 'fail', {}, { signal: never() });
    expect(out).toMatchObject({ text: 'the tool failed on purpose', isError: true });
  });

  it('ends a call at its timeout and the server sees it cancelled', async () => {
    const rec = server().s.rec;
    const before = rec.cancelled;
    const f = await failure(
      mcp.callTool(
        ep(server().s.url, { timeoutMs: 300, timeoutText: '300ms' }),
        'slow',
        { ms: 10_000 },
        {
          signal: never(),
        },
      ),
    );
    expect(f.reason).toBe('Timeout');
    expect(f.message).toBe('MCPServer test/srv: tools/call slow: no answer within 300ms');
    await until(() => rec.cancelled > before && rec.running === 0);
  });

  it('cancels a call when its signal aborts (the Query canceled)', async () => {
    const rec = server().s.rec;
    const before = rec.cancelled;
    const ac = new AbortController();
    const call = mcp.callTool(ep(server().s.url), 'slow', { ms: 10_000 }, { signal: ac.signal });
    await until(() => rec.running > 0);
    ac.abort(new Error('query canceled'));
    await expect(call).rejects.toThrow('query canceled');
    await until(() => rec.cancelled > before && rec.running === 0);
  });

  it('retries a call the server declined (503) and gives up after maxRetries', async () => {
    try {
      server().s.unavailableNext(2);
      const ok = await mcp.callTool(ep(server().s.url), 'echo', { text: 'again' }, { signal: never() });
      expect(ok.text).toBe(`echo(${revision}): again`);
      server().s.unavailableNext(5);
      const f = await failure(
        mcp.callTool(ep(server().s.url, { maxRetries: 1 }), 'echo', { text: 'x' }, { signal: never() }),
      );
      expect(f.reason).toBe('HttpError');
      expect(f.message).toMatch(/^MCPServer test\/srv: tools\/call echo: HTTP 503: .*\(2 attempts\)$/);
    } finally {
      server().s.unavailableNext(0);
    }
  });

  it('ends a 10 MB result at the byte cap with the limit named', async () => {
    const f = await failure(
      mcp.callTool(ep(server().s.url), 'big', { bytes: 10_000_000 }, { signal: never() }),
    );
    expect(f.reason).toBe('AnswerTooLarge');
    expect(f.message).toBe(
      'MCPServer test/srv: tools/call big: the MCP server answer is larger than 1 MiB (ENGINE_MAX_MCP_ANSWER_BYTES); it was not read further',
    );
  });
});

describe('which revision', () => {
  it('remembers a modern server: a call after discovery is one request, no probe', async () => {
    await mcp.discover(ep(modern.url), never());
    const before = modern.requests.POST ?? 0;
    await mcp.callTool(ep(modern.url), 'add', { a: 2, b: 3 }, { signal: never() });
    expect((modern.requests.POST ?? 0) - before).toBe(1);
  });

  it('falls back to initialize for a 2025-only server, keeps the session for the next call, DELETEs it at close', async () => {
    const own = new McpClient(http);
    const opened = legacy.sessions.opened;
    expect((await own.callTool(ep(legacy.url), 'add', { a: 2, b: 3 }, { signal: never() })).text).toBe('5');
    const posts = legacy.requests.POST ?? 0;
    expect((await own.callTool(ep(legacy.url), 'add', { a: 4, b: 5 }, { signal: never() })).text).toBe('9');
    expect((legacy.requests.POST ?? 0) - posts).toBe(1); // the call alone, on the kept session
    expect(legacy.sessions.opened).toBe(opened + 1);
    expect(legacy.requests.GET ?? 0).toBe(0); // no standalone stream is opened
    const deleted = legacy.sessions.deleted;
    await own.close();
    expect(legacy.sessions.deleted).toBe(deleted + 1);
  });

  it('a kept session the server forgot (404) is replaced without the call failing', async () => {
    const own = new McpClient(http);
    await own.callTool(ep(legacy.url), 'echo', { text: 'one' }, { signal: never() });
    legacy.forgetSessions();
    const opened = legacy.sessions.opened;
    const out = await own.callTool(ep(legacy.url), 'echo', { text: 'two' }, { signal: never() });
    expect(out.text).toBe('echo(2025-11-25): two');
    expect(legacy.sessions.opened).toBe(opened + 1);
    await own.close();
  });
});

describe('hostile servers end in bounded, explained errors', () => {
  it('a server that cannot be reached: Unreachable, after the retries', async () => {
    const f = await failure(mcp.discover(ep('http://127.0.0.1:1/mcp', { maxRetries: 1 }), never()));
    expect(f.reason).toBe('Unreachable');
    expect(f.message).toBe('MCPServer test/srv: discovery: cannot connect (ECONNREFUSED) (2 attempts)');
  });

  it('HTML or JSON that is not JSON-RPC: InvalidAnswer', async () => {
    for (const path of ['/garbage', '/garbage-json']) {
      const f = await failure(mcp.discover(ep(hostile.url(path)), never()));
      expect(f.reason, path).toBe('InvalidAnswer');
      expect(f.message, path).toMatch(/^MCPServer test\/srv: discovery: .+/);
    }
  });

  it('silence: Timeout at spec.timeout, and the request is not left open', async () => {
    const started = Date.now();
    const f = await failure(
      mcp.discover(ep(hostile.url('/slow'), { timeoutMs: 400, timeoutText: '400ms' }), never()),
    );
    expect(f.reason).toBe('Timeout');
    expect(f.message).toBe('MCPServer test/srv: discovery: no answer within 400ms');
    expect(Date.now() - started).toBeLessThan(3000);
    await until(() => hostile.held === 0);
  });

  it('endless tools/list pagination: TooManyPages, new cursors or the same one', async () => {
    const f = await failure(mcp.discover(ep(hostile.url('/pages')), never()));
    expect(f.reason).toBe('TooManyPages');
    expect(f.message).toBe(
      'MCPServer test/srv: discovery: tools/list still had more after 20 pages; Berth reads at most 20',
    );
    const g = await failure(mcp.discover(ep(hostile.url('/pages-repeat')), never()));
    expect(g.message).toMatch(/tools\/list page 2 repeats an earlier cursor/);
  });

  it('a 2026-07-28 server asking for input (input_required): InputRequested', async () => {
    const f = await failure(mcp.callTool(ep(hostile.url('/input')), 'ask', {}, { signal: never() }));
    expect(f.reason).toBe('InputRequested');
    expect(f.message).toMatch(/asked for input \(elicitation\/create\); Berth runs tools unattended/);
  });

  it('a 2025-11-25 server sending elicitation/create: refused, and the call ends at once', async () => {
    const started = Date.now();
    const f = await failure(mcp.callTool(ep(hostile.url('/elicit')), 'ask', {}, { signal: never() }));
    expect(f.reason).toBe('InputRequested');
    expect(f.message).toMatch(/asked for input \(elicitation\/create\)/);
    expect(Date.now() - started).toBeLessThan(4000);
    await until(() => hostile.elicitAnswers.length > 0);
    expect(hostile.elicitAnswers[0]).toMatchObject({ id: 'elicit-1', error: { code: -32601 } });
  });

  it('a server that dies during the call: the call ends with the connection named', async () => {
    const f = await failure(
      mcp.callTool(ep(hostile.url('/drop'), { maxRetries: 0 }), 'ask', {}, { signal: never() }),
    );
    expect(['Disconnected', 'Unreachable']).toContain(f.reason);
    expect(f.message).toMatch(/^MCPServer test\/srv: tools\/call ask: /);
  });

  it('a redirect to another origin is refused: the headers never leave the origin', async () => {
    const f = await failure(mcp.discover(ep(hostile.url('/redirect')), never()));
    expect(f.reason).toBe('RedirectRefused');
    expect(f.message).toMatch(
      /redirect from http:\/\/127\.0\.0\.1:\d+ to http:\/\/127\.0\.0\.2:9 refused: MCP calls/,
    );
  });
});
