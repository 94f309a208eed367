import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { streamText } from 'hono/streaming';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../log/index.ts';
import { errorHandler } from '../errors/index.ts';
import { REQUEST_ID_HEADER, requestId, requestIdOf } from './index.ts';

const app = new Hono();
app.use('*', requestId());
app.onError(errorHandler(createLogger({ level: 'silent' })));
app.get('/', (c) => c.text(requestIdOf(c) ?? 'missing'));
app.get('/boom', () => {
  throw new Error('boom');
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('requestId', () => {
  it('makes a UUID when the caller sends none, echoes it and exposes it to the handler', async () => {
    const res = await app.request('/');
    const id = res.headers.get(REQUEST_ID_HEADER) ?? '';
    expect(id).toMatch(UUID);
    expect(await res.text()).toBe(id);
    const other = await app.request('/');
    expect(other.headers.get(REQUEST_ID_HEADER)).not.toBe(id);
  });

  it("keeps a caller's short printable id, up to 128 characters", async () => {
    for (const given of ['trace-42:abc/def', 'a.b@c+d=e_f', 'x'.repeat(128)]) {
      const res = await app.request('/', { headers: { [REQUEST_ID_HEADER]: given } });
      expect(res.headers.get(REQUEST_ID_HEADER)).toBe(given);
      expect(await res.text()).toBe(given);
    }
  });

  it('replaces an id that is too long or carries characters unfit for logs and headers', async () => {
    for (const given of ['x'.repeat(129), 'a b', 'id"quoted', '<script>']) {
      const res = await app.request('/', { headers: { [REQUEST_ID_HEADER]: given } });
      expect(res.headers.get(REQUEST_ID_HEADER)).toMatch(UUID);
      expect(await res.text()).toBe(res.headers.get(REQUEST_ID_HEADER));
    }
  });

  it('ties an error response to the request: same id in the header and the envelope', async () => {
    const res = await app.request('/boom', { headers: { [REQUEST_ID_HEADER]: 'req-7' } });
    expect(res.status).toBe(500);
    expect(res.headers.get(REQUEST_ID_HEADER)).toBe('req-7');
    expect((await res.json()).error.requestId).toBe('req-7');
  });

  it('reaches the client over a real server on every kind of answer: JSON, errors, streams, 404', async () => {
    const served = new Hono();
    served.use('*', requestId());
    served.onError(errorHandler(createLogger({ level: 'silent' })));
    served.get('/json', (c) => c.json({ id: requestIdOf(c) }, 201));
    served.get('/boom', () => {
      throw new Error('boom');
    });
    served.get('/stream', (c) =>
      streamText(c, async (s) => {
        await s.write('chunk');
      }),
    );
    served.get('/own', (c) => c.json({}, 200, { [REQUEST_ID_HEADER]: 'from-the-handler' }));
    const server = serve({ fetch: served.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise((r) => server.once('listening', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const json = await fetch(`${base}/json`);
      const id = json.headers.get(REQUEST_ID_HEADER) ?? '';
      expect(id).toMatch(UUID);
      expect(await json.json()).toEqual({ id });
      expect(json.status).toBe(201);
      expect(json.headers.get('content-type')).toBe('application/json');
      const boom = await fetch(`${base}/boom`, { headers: { [REQUEST_ID_HEADER]: 'req-9' } });
      expect(boom.headers.get(REQUEST_ID_HEADER)).toBe('req-9');
      expect((await boom.json()).error.requestId).toBe('req-9');
      const stream = await fetch(`${base}/stream`, { headers: { [REQUEST_ID_HEADER]: 'req-10' } });
      expect(stream.headers.get(REQUEST_ID_HEADER)).toBe('req-10');
      expect(await stream.text()).toBe('chunk');
      const missing = await fetch(`${base}/nothing`);
      expect(missing.status).toBe(404);
      expect(missing.headers.get(REQUEST_ID_HEADER)).toMatch(UUID);
      // A handler that sets the header itself wins (as writeHead's headers do over setHeader's).
      expect((await fetch(`${base}/own`)).headers.get(REQUEST_ID_HEADER)).toBe('from-the-handler');
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
