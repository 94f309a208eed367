import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpClient, describeNetworkError, HttpError, requestJson } from './http.ts';

let server: http.Server;
let base: string;
const seen: Array<{
  method: string;
  url: string;
  body: string;
  type: string | undefined;
  traceparent?: string | undefined;
}> = [];
let sseSecond: () => void = () => {};

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => {
      body += d;
    });
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        body,
        type: req.headers['content-type'],
        traceparent: req.headers.traceparent as string | undefined,
      });
      if (req.url === '/moved') {
        res.writeHead(307, { location: '/messages?from=redirect' });
        return res.end();
      }
      if (req.url === '/missing') {
        res.writeHead(404, { 'content-type': 'application/json' });
        return res.end('{"error":"no such conversation"}');
      }
      if (req.url === '/slow') return; // never answers: the caller's signal ends it
      if (req.url === '/see-other') {
        res.writeHead(303, { location: '/after' });
        return res.end();
      }
      if (req.url === '/empty') {
        res.writeHead(204, { 'x-kind': 'empty' });
        return res.end();
      }
      if (req.url === '/sse') {
        // Two events, the second only once the first was read by the caller (see the test).
        res.writeHead(200, { 'content-type': 'text/event-stream', 'set-cookie': ['a=1', 'b=2'] });
        res.write('data: one\n\n');
        sseSecond = () => res.end('data: two\n\n');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ echo: body ? JSON.parse(body) : null, url: req.url }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('requestJson over the client’s request path', () => {
  const client = createHttpClient();
  afterAll(() => client.close());

  it('sends the JSON body with its type and parses the answer, query string kept', async () => {
    const out = await requestJson<{ echo: unknown; url: string }>(
      client.send,
      'Memory m',
      `${base}/messages?a=1&b=2`,
      {
        method: 'POST',
        body: { messages: [{ role: 'user', content: 'é' }] },
      },
    );
    expect(out).toEqual({ echo: { messages: [{ role: 'user', content: 'é' }] }, url: '/messages?a=1&b=2' });
    expect(seen.at(-1)).toMatchObject({ method: 'POST', type: 'application/json' });
  });

  it('follows a redirect as fetch does', async () => {
    const out = await requestJson<{ url: string }>(client.send, 'Memory m', `${base}/moved`, {
      method: 'GET',
    });
    expect(out.url).toBe('/messages?from=redirect');
  });

  it('throws an HttpError naming the call and the status, with the answer’s start', async () => {
    const err = await requestJson(client.send, 'Memory m: GET /messages', `${base}/missing`, {
      method: 'GET',
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpError);
    expect((err as HttpError).status).toBe(404);
    expect((err as Error).message).toBe(
      'Memory m: GET /messages: HTTP 404: {"error":"no such conversation"}',
    );
  });

  it('ends with the signal’s reason when aborted, and names refused connections', async () => {
    const ctl = new AbortController();
    const pending = requestJson(client.send, 'Memory m', `${base}/slow`, {
      method: 'GET',
      signal: ctl.signal,
    });
    ctl.abort(new Error('query deadline'));
    await expect(pending).rejects.toThrow('query deadline');
    const refused = await requestJson(client.send, 'Memory m', 'http://127.0.0.1:1/messages', {
      method: 'GET',
    }).catch((e: unknown) => e);
    expect((refused as Error).message).toMatch(/^Memory m: .*ECONNREFUSED/);
  });
});

describe('the client’s fetch (request API underneath)', () => {
  const client = createHttpClient();
  afterAll(() => client.close());

  it('answers like fetch: status, headers and a JSON body; the request body and headers sent as given', async () => {
    const res = await client.fetch(`${base}/chat?x=1`, {
      method: 'post',
      headers: new Headers({ 'content-type': 'application/json', traceparent: 'kept' }),
      body: JSON.stringify({ q: 'é' }),
    });
    expect(res.status).toBe(200);
    expect(res.ok).toBe(true);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toEqual({ echo: { q: 'é' }, url: '/chat?x=1' });
    expect(seen.at(-1)).toMatchObject({ method: 'POST', type: 'application/json', traceparent: 'kept' });
  });

  it('hands an event stream over as it arrives, keeping repeated headers', async () => {
    const res = await client.fetch(`${base}/sse`);
    expect(res.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe('data: one\n\n');
    sseSecond();
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read())
      rest += new TextDecoder().decode(r.value);
    expect(rest).toBe('data: two\n\n');
  });

  it('answers a bodiless status, follows redirects, and errors like fetch on abort and refusal', async () => {
    const empty = await client.fetch(`${base}/empty`);
    expect(empty.status).toBe(204);
    expect(empty.headers.get('x-kind')).toBe('empty');
    const before = seen.length;
    const moved = await client.fetch(`${base}/moved`, { method: 'POST', body: '{"n":1}' });
    expect(await moved.json()).toEqual({ echo: { n: 1 }, url: '/messages?from=redirect' });
    const other = await client.fetch(`${base}/see-other`, { method: 'POST', body: '{"n":2}' });
    expect(await other.json()).toEqual({ echo: null, url: '/after' });
    // Each hop once: a 307 keeps the method and body, a 303 turns the POST into a GET without it.
    expect(seen.slice(before).map((r) => `${r.method} ${r.url} ${r.body}`)).toEqual([
      'POST /moved {"n":1}',
      'POST /messages?from=redirect {"n":1}',
      'POST /see-other {"n":2}',
      'GET /after ',
    ]);
    const missing = await client.fetch(`${base}/missing`);
    expect(missing.status).toBe(404);
    expect(await missing.text()).toBe('{"error":"no such conversation"}');
    const ctl = new AbortController();
    const pending = client.fetch(`${base}/slow`, { signal: ctl.signal });
    ctl.abort(new Error('query deadline'));
    await expect(pending).rejects.toThrow('query deadline');
    const refused = await client.fetch('http://127.0.0.1:1/x').catch((e: unknown) => e);
    expect(describeNetworkError(refused)).toMatch(/ECONNREFUSED/);
  });
});

describe('requestJson when a connection closes under it', () => {
  it('resends a write carrying an Idempotency-Key; one without is an error', async () => {
    let seen = 0;
    const s = http.createServer((req, res) => {
      req.resume();
      seen++;
      // Every odd request: the socket closes under it, as a draining replica's does.
      if (seen % 2 === 1) return void req.socket.destroy();
      res.writeHead(201, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}/messages`;
    const client = createHttpClient();
    try {
      const keyed = await requestJson(client.send, 'write', url, {
        method: 'POST',
        body: { a: 1 },
        headers: { 'idempotency-key': 'k-1' },
      });
      expect(keyed).toEqual({ ok: true });
      expect(seen).toBe(2);
      await expect(
        requestJson(client.send, 'write', url, { method: 'POST', body: { a: 2 } }),
      ).rejects.toThrow(/write: /);
      expect(seen).toBe(3);
    } finally {
      await client.close();
      s.close();
    }
  });

  it('resends after a refused connection, whatever the method', async () => {
    const s = http.createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const port = (s.address() as AddressInfo).port;
    await new Promise<void>((r) => s.close(() => r()));
    // The port refuses at first; the server comes back on it within the retries.
    const back = http.createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"back":true}');
    });
    setTimeout(() => back.listen(port, '127.0.0.1'), 300);
    const client = createHttpClient();
    try {
      const got = await requestJson(client.send, 'read', `http://127.0.0.1:${port}/x`, {
        method: 'POST',
        body: {},
      });
      expect(got).toEqual({ back: true });
    } finally {
      await client.close();
      back.close();
    }
  });
});
