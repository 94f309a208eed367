/**
 * `/mcp` under hostile requests (issue 29 item 6): every one is a 4xx, never a 5xx — malformed or
 * deeply nested JSON, a body over the limit, batches, `__proto__` keys, unknown methods, a wrong
 * protocol version header, missing, unknown or another caller's session ids, other methods and
 * media types, a foreign Origin — and arbitrary JSON (property-based) too. Refusals made before
 * the SDKs carry a code of the registry; the SDKs' own are JSON-RPC errors.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RunningGateway } from '../../pkg/gateway/server.ts';
import { type Platform, startPlatform } from '../compat/platform.ts';
import { connect, LEGACY, MODERN } from './clients.ts';

let p: Platform;
let api: RunningGateway;
let small: RunningGateway;
let url: string;

// Generous bounds: the machine these run on is shared with other suites (waits are for conditions).
vi.setConfig({ testTimeout: 120_000 });

beforeAll(async () => {
  p = await startPlatform('mcp-hostile');
  api = p.api;
  url = `${api.url}/mcp`;
  // Room for two sessions per caller: the bound is reached within the test.
  small = await p.startApi({ env: { MCP_MAX_SESSIONS_PER_CALLER: '2' } });
});
afterAll(async () => {
  await p?.stop();
});

const ACCEPT = 'application/json, text/event-stream';
const META = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'hostile', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
const modernHeaders = (method: string) => ({
  'content-type': 'application/json',
  accept: ACCEPT,
  'mcp-protocol-version': MODERN,
  'mcp-method': method,
});

async function send(
  body: string | Buffer | undefined,
  headers: Record<string, string>,
  method = 'POST',
  to = url,
) {
  const res = await fetch(to, { method, headers, body });
  const text = await res.text();
  let json: { error?: { code?: string | number; message?: string } } | undefined;
  try {
    json = JSON.parse(text.startsWith('event:') || text.startsWith('data:') ? '{}' : text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json, headers: res.headers };
}
const post = (
  body: unknown,
  headers: Record<string, string> = { 'content-type': 'application/json', accept: ACCEPT },
) => send(typeof body === 'string' ? body : JSON.stringify(body), headers);

/** A 2025-11-25 session opened by hand; its id. */
async function initialize(to = url, headers: Record<string, string> = {}): Promise<string> {
  const res = await fetch(to, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 'h', version: '1' } },
    }),
  });
  await res.text();
  expect(res.status).toBe(200);
  return res.headers.get('mcp-session-id') as string;
}
const inSession = (id: string) => ({
  'content-type': 'application/json',
  accept: ACCEPT,
  'mcp-session-id': id,
  'mcp-protocol-version': LEGACY,
});

describe('/mcp refuses before the SDKs, with a code of the registry', () => {
  it('malformed JSON, JSON nested thousands deep, a body over the limit', async () => {
    expect((await post('{"jsonrpc": "2.0", "method": ')).json?.error?.code).toBe('invalid_json');
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    const tooDeep = await post(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":${deep}}}`);
    expect([tooDeep.status, tooDeep.json?.error?.code]).toEqual([400, 'json_too_deep']);
    const huge = await send(Buffer.alloc(11 * 1024 * 1024, 0x20), { 'content-type': 'application/json' });
    expect([huge.status, huge.json?.error?.code]).toEqual([413, 'payload_too_large']);
  });

  it('batches, non-objects and __proto__ keys', async () => {
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: META } };
    for (const body of [[list], [], 'null', '42', '"tools/list"']) {
      const r = await post(body, modernHeaders('tools/list'));
      expect([r.status, r.json?.error?.code], JSON.stringify(body)).toEqual([400, 'invalid_request']);
    }
    const proto = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"invoke_target","arguments":{"target":"agent/helper","input":"x","__proto__":{"polluted":true}},"_meta":${JSON.stringify(META)}}}`;
    const r = await post(proto, modernHeaders('tools/call'));
    expect([r.status, r.json?.error?.code]).toEqual([400, 'invalid_request']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('other methods, media types and origins', async () => {
    for (const method of ['GET', 'PUT', 'PATCH']) {
      const r = await send(method === 'GET' ? undefined : '{}', { accept: ACCEPT }, method);
      expect([r.status, r.json?.error?.code], method).toEqual([405, 'method_not_allowed']);
      expect(r.headers.get('allow')).toBe('POST, DELETE');
    }
    const plain = await send('{}', { 'content-type': 'text/plain', accept: ACCEPT });
    expect([plain.status, plain.json?.error?.code]).toEqual([415, 'unsupported_media_type']);
    const evil = await send('{}', { 'content-type': 'application/json', origin: 'https://evil.example' });
    expect([evil.status, evil.json?.error?.code]).toEqual([403, 'forbidden']);
  });

  it('2025-11-25 sessions: missing or unknown ids, and the per-caller bound', async () => {
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };
    const missing = await post(list);
    expect([missing.status, missing.json?.error?.code]).toEqual([400, 'mcp_session_required']);
    const unknown = await post(list, inSession('00000000-0000-4000-8000-000000000000'));
    expect([unknown.status, unknown.json?.error?.code]).toEqual([404, 'mcp_session_not_found']);
    const del = await send(undefined, { 'mcp-session-id': 'nope' }, 'DELETE');
    expect(del.status).toBe(404);
    // A caller holds two sessions here: a third replaces the least recently used one.
    const to = `${small.url}/mcp`;
    const a = await initialize(to);
    const b = await initialize(to);
    const c = await initialize(to);
    const status = async (id: string) => (await send(JSON.stringify(list), inSession(id), 'POST', to)).status;
    expect([await status(a), await status(b), await status(c)]).toEqual([404, 200, 200]);
  });
});

describe('/mcp: what the SDKs refuse is a 4xx JSON-RPC error', () => {
  it('unknown methods, in either revision', async () => {
    const modern = await post(
      { jsonrpc: '2.0', id: 1, method: 'evil/method', params: { _meta: META } },
      modernHeaders('evil/method'),
    );
    expect(modern.status).toBe(404);
    expect(modern.json?.error?.code).toBe(-32601);
    const id = await initialize();
    for (const method of ['evil/method', 'constructor', '__proto__', 'resources/list']) {
      const r = await post({ jsonrpc: '2.0', id: 3, method, params: {} }, inSession(id));
      expect([r.status, r.json?.error?.code], method).toEqual([404, -32601]);
    }
  });

  it('a wrong protocol version header, or one the body contradicts', async () => {
    const list = (v: string) => ({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
      params: { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': v } },
    });
    const old = await post(list('1999-01-01'), {
      ...modernHeaders('tools/list'),
      'mcp-protocol-version': '1999-01-01',
    });
    expect(old.status).toBe(400);
    const mismatch = await post(list(MODERN), {
      ...modernHeaders('tools/list'),
      'mcp-protocol-version': LEGACY,
    });
    expect(mismatch.status).toBe(400);
    const id = await initialize();
    const legacy = await post(
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { ...inSession(id), 'mcp-protocol-version': '1999-01-01' },
    );
    expect(legacy.status).toBe(400);
  });

  it('arbitrary JSON, in both revisions, is never a 5xx', async () => {
    const id = await initialize();
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 4 }), fc.boolean(), async (value, modern) => {
        const body =
          typeof value === 'object' && value !== null && !Array.isArray(value)
            ? { jsonrpc: '2.0', ...value }
            : value;
        const r = await post(JSON.stringify(body), modern ? modernHeaders('tools/call') : inSession(id));
        expect(r.status, r.text.slice(0, 300)).toBeLessThan(500);
      }),
      { numRuns: 150 },
    );
  });

  it('after all of it, a real client still works', async () => {
    const client = await connect(api.url, 'modern');
    expect((await client.listTools()).tools).toHaveLength(2);
    await client.close();
  });
});
