import { connect } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type Listening, listenHttp } from '../listen/index.ts';
import type { Readiness } from './index.ts';
import { answerProbes } from './socket.ts';

let server: Listening | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A server whose app answers `app` to anything: a probe answered by the app would show it. */
async function serve(readiness: () => Readiness | Promise<Readiness>, logger = { error: vi.fn() }) {
  server = await listenHttp(() => new Response('app', { status: 299 }), {
    port: 0,
    probes: answerProbes({ readiness, logger }),
  });
  return { url: server.url, logger };
}

describe('answerProbes', () => {
  it('answers liveness and readiness on the socket, with the caller id, for GET and HEAD', async () => {
    const { url } = await serve(() => ({ ready: true, details: { backends: [] } }));
    for (const path of ['/health', '/healthz', '/health?verbose=1']) {
      const res = await fetch(`${url}${path}`, { headers: { 'x-request-id': 'kubelet-7' } });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-request-id')).toBe('kubelet-7');
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(await res.json()).toEqual({ status: 'ok' });
    }
    const ready = await fetch(`${url}/readyz`);
    expect(await ready.json()).toEqual({ status: 'ready', backends: [] });
    expect(ready.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const head = await fetch(`${url}/healthz`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('answers not ready with the error envelope and its headers', async () => {
    const { url } = await serve(() => ({
      ready: false,
      code: 'storage_unavailable',
      message: 'postgres (messages) is unavailable',
      details: { backends: [{ ok: false }] },
      headers: { 'retry-after': '5' },
    }));
    const res = await fetch(`${url}/readyz`, { headers: { 'x-request-id': 'r-1' } });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(await res.json()).toEqual({
      error: {
        code: 'storage_unavailable',
        message: 'postgres (messages) is unavailable',
        requestId: 'r-1',
        details: { backends: [{ ok: false }] },
      },
    });
  });

  it('leaves everything else to the app: other paths, other methods, look-alike paths', async () => {
    const { url } = await serve(() => ({ ready: true }));
    for (const [method, path] of [
      ['GET', '/messages'],
      ['POST', '/health'],
      ['GET', '/health/'],
      ['GET', '/Health'],
      ['GET', '/healthz/x'],
      ['GET', '//health'],
      ['DELETE', '/readyz'],
    ] as const) {
      const res = await fetch(`${url}${path}`, { method });
      expect(res.status, `${method} ${path}`).toBe(299);
      expect(await res.text()).toBe('app');
    }
  });

  it('keeps a hostile request id out of the answer and a failing check out of it too', async () => {
    const { url, logger } = await serve(() => {
      throw new Error('secret detail: password=hunter2');
    });
    const odd = await fetch(`${url}/health`, { headers: { 'x-request-id': 'a b<script>' } });
    expect(odd.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const res = await fetch(`${url}/readyz`);
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).not.toContain('hunter2');
    expect(JSON.parse(text).error.code).toBe('internal');
    expect(logger.error).toHaveBeenCalledWith(
      expect.objectContaining({ path: '/readyz', err: expect.any(Error) }),
      'readiness check failed',
    );
  });

  it('answers a probe that carries a body without reading the body as a request', async () => {
    const { url } = await serve(() => ({ ready: true }));
    const { port } = new URL(url);
    // A body the probe never reads, then a second request smuggled right behind it in the same write.
    const wire =
      'GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: 31\r\n\r\nGET /readyz HTTP/1.1\r\nHost: x\r\n' +
      'GET /messages HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n';
    const text = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => socket.end(wire));
      let out = '';
      socket.setEncoding('utf8');
      socket.on('data', (d) => {
        out += d;
      });
      socket.on('end', () => resolve(out));
      socket.on('error', reject);
    });
    const statuses = [...text.matchAll(/^HTTP\/1\.1 (\d+)/gm)].map((m) => m[1]);
    // The 31 bytes are the probe's body, never a request of their own. Node then either serves the
    // request after them (the app's 299) or closes the connection, as it does for any route that
    // leaves a body unread.
    expect(['200', '200,299']).toContain(statuses.join(','));
    expect(text).toContain('{"status":"ok"}');
    expect(text).not.toContain('"ready"');
  });
});
