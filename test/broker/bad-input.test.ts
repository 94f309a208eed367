import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RunningBroker } from '../../pkg/broker/server.ts';
import { startTestBroker } from './harness.ts';

let b: RunningBroker;
beforeAll(async () => {
  b = await startTestBroker({ bodyLimitBytes: 64 * 1024 });
});
afterAll(() => b.close());

type Case = [method: string, path: string, body?: string, type?: string];
const big = JSON.stringify({
  conversation_id: 'c',
  messages: [{ role: 'user', content: 'x'.repeat(70 * 1024) }],
});

const cases: Case[] = [
  // malformed JSON
  ['POST', '/messages', '{nope'],
  ['POST', '/events', '{"eventType":'],
  ['POST', '/conversations', '{bad'],
  ['POST', '/sessions', '[1,'],
  ['POST', '/stream/q', '{bad', 'application/json'],
  ['POST', '/stream/q', '{"ok":1}\nnot json\n', 'application/x-ndjson'],
  ['POST', '/v1/traces', '{bad'],
  // wrong types and missing fields
  ['POST', '/messages', '{"conversation_id":1,"messages":"x"}'],
  ['POST', '/messages', '{"conversation_id":"c"}'],
  ['POST', '/messages', '{"conversation_id":"c","messages":[{"content":"no role"}]}'],
  ['POST', '/messages', '{"conversation_id":"c","messages":[],"ttl_seconds":-5}'],
  ['POST', '/events', '{"eventType":"Loud","reason":"x"}'],
  ['POST', '/events', '{"eventType":"Normal"}'],
  ['POST', '/events', '{"eventType":"Normal","reason":"r","timestamp":"yesterday"}'],
  ['POST', '/events', '{"eventType":"Normal","reason":"r","data":{"queryId":{"nested":true}}}'],
  ['POST', '/conversations', '{"conversation_id":42}'],
  ['POST', '/sessions', '{"sessionId":""}'],
  ['POST', '/stream/q', '[1,2]', 'application/json'],
  ['POST', '/v1/traces', '{"resourceSpans":"nope"}'],
  ['POST', '/v1/traces', '[1]'],
  // limits, cursors and flags
  ...['/messages', '/events', '/events/q', '/stream', '/traces', '/sessions', '/conversations'].flatMap(
    (p): Case[] => [
      ['GET', `${p}?limit=-1`],
      ['GET', `${p}?limit=abc`],
      ['GET', `${p}?limit=1001`],
      ['GET', `${p}?limit=0`],
      ['GET', `${p}?cursor=-3`],
      ['GET', `${p}?cursor=1e9`],
      ['GET', `${p}?watch=maybe`],
    ],
  ),
  ['GET', '/messages?offset=-1'],
  ['GET', '/sessions?status=sleepy'],
  ['GET', '/sessions?sort=size'],
  ['GET', '/sessions?order=up'],
  ['GET', '/sessions?dateFrom=notadate'],
  ['GET', '/stream/q?wait-for-query=soon'],
  ['GET', '/stream/q?max-chunk-size=0'],
  ['GET', '/stream/q?from-beginning=perhaps'],
  // unknown ids
  ['GET', '/conversations/unknown'],
  ['DELETE', '/conversations/unknown'],
  ['DELETE', '/conversations/unknown/queries/q/messages'],
  ['GET', '/traces/0123456789abcdef0123456789abcdef'],
  ['GET', '/sessions/unknown'],
  ['GET', '/stream/unknown'],
  ['POST', '/stream/unknown/complete'],
  ['GET', '/no/such/route'],
  // wrong media types
  ['POST', '/messages', 'conversation_id=c', 'application/x-www-form-urlencoded'],
  ['POST', '/events', '<event/>', 'application/xml'],
  ['POST', '/stream/q', 'hello', 'text/plain'],
  ['POST', '/v1/traces', 'x', 'text/plain'],
  ['POST', '/conversations', 'x', 'text/plain'],
  // oversize bodies
  ['POST', '/messages', big],
  ['POST', '/events', big],
  ['POST', '/v1/traces', big],
  ['POST', '/stream/q', big, 'application/x-ndjson'],
];

describe('bad input: a clear 4xx with the error envelope, never a 5xx', () => {
  it.each(cases)('%s %s', async (method, path, body, type) => {
    const res = await fetch(`${b.url}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': type ?? 'application/json' },
      body,
    });
    expect(res.status, await res.clone().text()).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    const envelope = await res.json();
    expect(envelope.error).toMatchObject({
      code: expect.any(String),
      message: expect.any(String),
      requestId: expect.any(String),
    });
    expect(res.headers.get('x-request-id')).toBe(envelope.error.requestId);
  });

  it('answers 413 for an oversize chunked body and keeps serving', async () => {
    const chunked = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < 10; i++) c.enqueue(new TextEncoder().encode(`{"pad":"${'x'.repeat(10_000)}"}\n`));
        c.close();
      },
    });
    const res = await fetch(`${b.url}/stream/chunked`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson' },
      body: chunked,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
    expect((await fetch(`${b.url}/health`)).status).toBe(200);
  });

  it('stores the NDJSON lines before a bad one and says how many, wherever the reads split', async () => {
    const res = await fetch(`${b.url}/stream/bad-line`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson' },
      body: '{"id":1}\n{"id":2}\n[3]\n{"id":4}\n',
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({
      code: 'invalid_chunk',
      message: expect.stringMatching(/^line 3: .*; 2 chunk\(s\) before it were stored$/),
      details: { chunks_received: 2 },
    });
    const page = await (await fetch(`${b.url}/stream?query=bad-line`)).json();
    expect(page.items.map((r: { chunk: { id: number } }) => r.chunk.id)).toEqual([1, 2]);
  });

  it('refuses a chunked body sent in thousands of tiny pieces, and keeps serving', async () => {
    // Every chunked-encoding piece costs the parser and the reader the same whatever its size: 11,000
    // one-byte pieces (an 11 KB body, under the limit) are refused once past 10,000.
    const { port } = new URL(b.url);
    const s = connect(Number(port), '127.0.0.1');
    await new Promise((r) => s.once('connect', r));
    let answer = '';
    s.on('data', (d) => {
      answer += d;
    });
    s.write('POST /stream/tiny HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\n');
    s.write('Transfer-Encoding: chunked\r\n\r\n1\r\n{\r\n');
    s.write('1\r\n \r\n'.repeat(11_000));
    await vi.waitFor(() => expect(answer).toMatch(/\}$/), { timeout: 5000 });
    s.destroy();
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain('"code":"invalid_request"');
    expect(answer).toContain('pieces averaging under 8 bytes');
    expect((await fetch(`${b.url}/health`)).status).toBe(200);
  });

  it('echoes a caller request id', async () => {
    const res = await fetch(`${b.url}/conversations/missing`, { headers: { 'x-request-id': 'trace-me-1' } });
    expect(res.headers.get('x-request-id')).toBe('trace-me-1');
    expect((await res.json()).error.requestId).toBe('trace-me-1');
  });
});
