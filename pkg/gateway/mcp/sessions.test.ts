import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HttpError } from '../../http/index.ts';
import { createLogger } from '../../log/index.ts';
import { LegacySessions } from './sessions.ts';

/** Sessions of a real SDK 1.x server with one tool that waits until the test lets it answer. */
let release: () => void = () => {};
function sessions(limits: { max?: number; perCaller?: number; idleMs?: number } = {}) {
  let now = 1_000_000;
  const build = () => {
    const server = new McpServer({ name: 'test', version: '1' });
    server.registerTool('wait', { inputSchema: z.object({}) }, async () => {
      await new Promise<void>((r) => {
        release = r;
      });
      return { content: [{ type: 'text', text: 'done' }] };
    });
    return server;
  };
  const s = new LegacySessions(
    { max: limits.max ?? 10, perCaller: limits.perCaller ?? 10, idleMs: limits.idleMs ?? 60_000 },
    build,
    createLogger({ level: 'silent' }),
    () => now,
  );
  const advance = (ms: number) => {
    now += ms;
  };
  return { s, advance };
}

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const post = (body: unknown, id?: string) =>
  new Request('http://berth.test/mcp', {
    method: 'POST',
    headers: { ...HEADERS, ...(id ? { 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' } : {}) },
    body: JSON.stringify(body),
  });
const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
};
const list = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };

async function open(s: LegacySessions, owner: string): Promise<string> {
  const res = await s.handle(post(initialize), initialize, owner, undefined);
  expect(res.status).toBe(200);
  await res.text();
  const id = res.headers.get('mcp-session-id');
  if (!id) throw new Error('no session id');
  return id;
}

async function refusal(p: Promise<unknown>): Promise<HttpError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(HttpError);
  return err as HttpError;
}

let current: LegacySessions | undefined;
afterEach(async () => {
  release();
  await current?.close();
});

describe('2025-11-25 sessions', () => {
  it('answer their owner only: another caller gets the 404 of an unknown id', async () => {
    const { s } = sessions();
    current = s;
    const id = await open(s, 'key:a');
    expect(s.size).toBe(1);
    expect(s.owns(id, 'key:a')).toBe(true);
    expect(s.owns(id, 'key:b')).toBe(false);
    const ok = await s.handle(post(list, id), list, 'key:a', id);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('"wait"');
    const theirs = await refusal(s.handle(post(list, id), list, 'key:b', id));
    const none = await refusal(s.handle(post(list, 'no-such-id'), list, 'key:a', 'no-such-id'));
    for (const err of [theirs, none])
      expect(err).toMatchObject({ status: 404, code: 'mcp_session_not_found' });
    expect(theirs.message).toBe(none.message);
  });

  it('a caller over its bound loses its least recently used idle session', async () => {
    const { s, advance } = sessions({ perCaller: 2 });
    current = s;
    const first = await open(s, 'anonymous');
    advance(10);
    const second = await open(s, 'anonymous');
    advance(10);
    await (await s.handle(post(list, first), list, 'anonymous', first)).text(); // first is now the fresher
    advance(10);
    const third = await open(s, 'anonymous');
    expect(s.size).toBe(2);
    expect(s.owns(second, 'anonymous')).toBe(false);
    expect(s.owns(first, 'anonymous') && s.owns(third, 'anonymous')).toBe(true);
  });

  it('a full instance refuses a new session with 429 and Retry-After', async () => {
    const { s } = sessions({ max: 2 });
    current = s;
    await open(s, 'key:a');
    await open(s, 'key:b');
    const err = await refusal(s.handle(post(initialize), initialize, 'key:c', undefined));
    expect(err).toMatchObject({ status: 429, code: 'mcp_session_limit' });
    expect(err.headers?.['retry-after']).toBe('10');
  });

  it('closes sessions idle past idleMs, but not one whose call is still answering', async () => {
    const { s, advance } = sessions({ idleMs: 1000, perCaller: 1 });
    current = s;
    const idle = await open(s, 'key:a');
    const busy = await open(s, 'key:b');
    const call = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'wait', arguments: {} } };
    const answering = await s.handle(post(call, busy), call, 'key:b', busy);
    advance(5000);
    s.sweep();
    expect(s.owns(idle, 'key:a')).toBe(false);
    expect(s.owns(busy, 'key:b')).toBe(true);
    // Its only session busy, the caller cannot open another in its place.
    const err = await refusal(s.handle(post(initialize), initialize, 'key:b', undefined));
    expect(err).toMatchObject({ status: 429, code: 'mcp_session_limit' });
    release();
    expect(await answering.text()).toContain('done');
    advance(5000);
    s.sweep();
    expect(s.size).toBe(0);
  });

  it('a DELETE closes the session; an initialize the SDK refuses keeps none', async () => {
    const { s } = sessions();
    current = s;
    const id = await open(s, 'key:a');
    const del = new Request('http://berth.test/mcp', {
      method: 'DELETE',
      headers: { 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' },
    });
    expect((await s.handle(del, undefined, 'key:a', id)).status).toBe(200);
    expect(s.size).toBe(0);
    const bad = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 7 } };
    const res = await s.handle(post(bad), bad, 'key:a', undefined);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(s.size).toBe(0);
  });
});
