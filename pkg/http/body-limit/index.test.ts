import { type IncomingMessage, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../log/index.ts';
import { errorHandler, httpError, renderEnvelope } from '../errors/index.ts';
import { bodyLimit, requestBodyChunks } from './index.ts';

const LIMIT = 100;
const MESSAGE = `request body exceeds the limit of ${LIMIT} bytes`;
let refusals: string[] = []; // messages handed to onTooLarge
let reached = 0; // handler entries

// Wired as in pkg/broker/app.ts: the callback answers with the shared error envelope.
const app = new Hono();
app.use(
  '*',
  bodyLimit(LIMIT, (c, message) => {
    refusals.push(message);
    return renderEnvelope(c, httpError('payload_too_large', message));
  }),
);
app.onError(errorHandler(createLogger({ level: 'silent' })));
app.post('/echo', async (c) => {
  reached++;
  return c.text(await c.req.text());
});
// A handler that deals with the failed read itself (so the error handler never sees it).
app.post('/swallow', async (c) => {
  reached++;
  try {
    return c.text(await c.req.text());
  } catch {
    return c.text('read failed', 400);
  }
});
app.get('/echo', (c) => c.text('no body'));
// Reads the body piece by piece as NDJSON ingest does: each piece is acknowledged on `seen` as it
// arrives; a piece `bad` ends the request with a 400 while the rest of the upload is still unsent.
let seen: (piece: string) => void = () => {};
// Whether a Web stream was put over the Node request (Readable.toWeb listens for its `data`).
let webOverNode: boolean | undefined;
// How the last read of /pieces ended when it failed (a client gone mid-upload must end it, not hang it).
let readFailed: (err: Error) => void = () => {};
// Whether the request was left paused when the read stopped (not flowing on, its bytes dropped).
let pausedOnStop: boolean | undefined;
app.post('/pieces', async (c) => {
  const chunks = requestBodyChunks(c);
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  let n = 0;
  try {
    for await (const piece of chunks ?? []) {
      const text = Buffer.from(piece).toString();
      if (text === 'bad') throw httpError('invalid_request', `piece ${n + 1} is bad`);
      n++;
      seen(text);
    }
  } catch (err) {
    pausedOnStop = incoming?.isPaused();
    readFailed(err as Error);
    throw err;
  }
  // Our reader lets go of the request once the body ended (a Web stream over it would still listen).
  webOverNode = incoming && incoming.listenerCount('data') > 0;
  return c.json({ pieces: n });
});

let server: ReturnType<typeof serve>;
let base = '';
beforeAll(async () => {
  server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((r) => server.once('listening', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
beforeEach(() => {
  refusals = [];
  reached = 0;
});

/** A chunked POST (no content-length) through the real Node adapter, and its answer. */
function open(path: string, type: string) {
  const { hostname, port } = new URL(base);
  const headers = { 'transfer-encoding': 'chunked', 'content-type': type };
  const req = request({ host: hostname, port, path, method: 'POST', headers });
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        body += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
  return { req, answer };
}

/**
 * A chunked upload written piece by piece: `write` sends one and resolves once the handler has seen
 * it (so each piece is proven to arrive while the upload is still open).
 */
function upload(path: string) {
  const { req, answer } = open(path, 'application/x-ndjson');
  const write = (piece: string) =>
    new Promise<string>((resolve) => {
      seen = resolve;
      req.write(piece);
    });
  return { write, answer, end: () => req.end(), req };
}

/** POSTs `chunks` at once with transfer-encoding: chunked. */
function chunked(path: string, chunks: string[]): Promise<{ status: number; body: string }> {
  const { req, answer } = open(path, 'text/plain');
  for (const c of chunks) req.write(c);
  req.end();
  return answer;
}

const post = (body: string) => fetch(`${base}/echo`, { method: 'POST', body });

describe('bodyLimit', () => {
  it('passes a declared content-length under and at the limit', async () => {
    for (const size of [1, LIMIT - 1, LIMIT]) {
      const res = await post('x'.repeat(size));
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('x'.repeat(size));
    }
    expect(reached).toBe(3);
    expect(refusals).toEqual([]);
  });

  it('refuses a declared content-length over the limit through onTooLarge, without running the handler', async () => {
    const res = await post('x'.repeat(LIMIT + 1));
    expect(res.status).toBe(413);
    expect((await res.json()).error).toMatchObject({ code: 'payload_too_large', message: MESSAGE });
    expect(refusals).toEqual([MESSAGE]);
    expect(reached).toBe(0);
  });

  it('streams a chunked body up to the limit to the handler intact', async () => {
    const chunks = ['a'.repeat(40), 'b'.repeat(40), 'c'.repeat(20)];
    const res = await chunked('/echo', chunks);
    expect(res).toEqual({ status: 200, body: chunks.join('') });
    expect(refusals).toEqual([]);
  });

  it('answers 413 to a chunked body that goes over the limit while the handler reads it', async () => {
    const res = await chunked('/echo', ['a'.repeat(60), 'b'.repeat(60), 'c'.repeat(60)]);
    expect(reached).toBe(1);
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body).error).toMatchObject({ code: 'payload_too_large', message: MESSAGE });
  });

  it('still answers 413 through onTooLarge when the handler swallows the failed read', async () => {
    const res = await chunked('/swallow', ['a'.repeat(60), 'b'.repeat(60)]);
    expect(reached).toBe(1);
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body).error.message).toBe(MESSAGE);
    expect(refusals).toEqual([MESSAGE]);
  });

  it('lets a GET without a body through', async () => {
    const res = await fetch(`${base}/echo`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('no body');
    expect(refusals).toEqual([]);
  });

  it('hands a streamed body to requestBodyChunks piece by piece, from the Node request itself', async () => {
    const up = upload('/pieces');
    expect(await up.write('one')).toBe('one');
    expect(await up.write('two')).toBe('two');
    up.end();
    expect(await up.answer).toEqual({ status: 200, body: '{"pieces":2}' });
    // Not a Web stream over the request (Readable.toWeb pauses it between reads: docs/broker.md).
    expect(webOverNode).toBe(false);
  });

  it('answers 413 when a piece read through requestBodyChunks goes over the limit', async () => {
    const up = upload('/pieces');
    expect(await up.write('a'.repeat(60))).toBe('a'.repeat(60));
    up.req.write('b'.repeat(60));
    up.end();
    const res = await up.answer;
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body).error).toMatchObject({ code: 'payload_too_large', message: MESSAGE });
  });

  it('answers a reader that stops early while the upload is still open (the socket is not destroyed)', async () => {
    const up = upload('/pieces');
    expect(await up.write('one')).toBe('one');
    up.req.write('bad');
    const res = await up.answer;
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body).error.message).toBe('piece 2 is bad');
    expect(pausedOnStop).toBe(true);
    up.req.destroy();
  });

  it('ends the read with an error, not a wait, when the client goes away mid-upload', async () => {
    const up = upload('/pieces');
    up.answer.catch(() => {}); // the client side is torn down on purpose
    expect(await up.write('one')).toBe('one');
    const failed = new Promise<Error>((resolve) => {
      readFailed = resolve;
    });
    up.req.destroy();
    expect(await failed).toMatchObject({ code: 'ECONNRESET' });
  });

  it('reads a body sent faster than the handler reads it, in order and complete', async () => {
    const pieces = Array.from({ length: 200 }, (_, i) => `p${i};`);
    const res = await chunked('/echo', pieces);
    // 200 pieces of ≤ 5 bytes go over the 100-byte cap: counted as they arrive.
    expect(res.status).toBe(413);
    const small = Array.from({ length: 30 }, (_, i) => String(i % 10).repeat(3));
    const ok = await chunked('/echo', small);
    expect(ok).toEqual({ status: 200, body: small.join('') });
  });

  it('offers the Web body, counted, when the app does not run on the Node adapter', async () => {
    const res = await app.request('/pieces', {
      method: 'POST',
      body: new ReadableStream({
        start(c) {
          c.enqueue(new TextEncoder().encode('one'));
          c.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(await res.json()).toEqual({ pieces: 1 });
    expect(webOverNode).toBeUndefined();
    const over = await app.request('/pieces', {
      method: 'POST',
      body: new ReadableStream({
        start(c) {
          c.enqueue(new TextEncoder().encode('a'.repeat(LIMIT + 1)));
          c.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(over.status).toBe(413);
  });
});
