import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../log/index.ts';
import { errorHandler, sendError } from '../errors/index.ts';
import { bodyLimit } from './index.ts';

const LIMIT = 100;
let reached = 0;
const app = new Hono();
app.use(
  '*',
  bodyLimit(LIMIT, (c, message) => sendError(c, 413, 'payload_too_large', message)),
);
app.onError(errorHandler(createLogger({ level: 'silent' })));
app.post('/echo', async (c) => {
  reached++;
  return c.text(await c.req.text());
});
app.get('/echo', (c) => c.text('no body'));

let server: ReturnType<typeof serve>;
let port = 0;
beforeAll(async () => {
  server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((r) => server.once('listening', () => r()));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

/** Sends `chunks` with transfer-encoding: chunked (no content-length) through the real Node adapter. */
function chunked(chunks: string[]): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/echo', method: 'POST', headers: { 'transfer-encoding': 'chunked' } },
      (res) => {
        let body = '';
        res.on('data', (d) => {
          body += d;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    for (const c of chunks) req.write(c);
    req.end();
  });
}

describe('bodyLimit', () => {
  it('passes a declared body at the limit and refuses one over it without running the handler', async () => {
    const url = `http://127.0.0.1:${port}/echo`;
    const at = await fetch(url, { method: 'POST', body: 'x'.repeat(LIMIT) });
    expect(at.status).toBe(200);
    expect((await at.text()).length).toBe(LIMIT);
    const before = reached;
    const over = await fetch(url, { method: 'POST', body: 'x'.repeat(LIMIT + 1) });
    expect(over.status).toBe(413);
    expect((await over.json()).error.message).toBe(`request body exceeds the limit of ${LIMIT} bytes`);
    expect(reached).toBe(before);
  });

  it('streams a chunked body under the limit to the handler intact', async () => {
    const res = await chunked(['a'.repeat(30), 'b'.repeat(30), 'c'.repeat(30)]);
    expect(res.status).toBe(200);
    expect(res.body).toBe(`${'a'.repeat(30)}${'b'.repeat(30)}${'c'.repeat(30)}`);
  });

  it('answers 413 to a chunked body that goes over the limit while the handler reads it', async () => {
    const res = await chunked(['a'.repeat(60), 'b'.repeat(60)]);
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body).error.code).toBe('payload_too_large');
  });

  it('lets a GET without a body through', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/echo`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('no body');
  });
});
