import { Agent, get, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { stream } from 'hono/streaming';
import { afterEach, describe, expect, it } from 'vitest';
import { Drain, shutdownGraceSeconds } from './index.ts';

/** A gate a handler waits on, opened by the test: no sleeps. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return { open, opened };
}

let servers: Server[] = [];
afterEach(() => {
  for (const s of servers) s.closeAllConnections();
  servers = [];
});

async function start(app: (drain: () => Drain) => Hono) {
  let drain: Drain | undefined;
  const server = serve({ fetch: app(() => drain as Drain).fetch, port: 0, hostname: '127.0.0.1' }) as Server;
  servers.push(server);
  drain = new Drain(server);
  await new Promise<void>((r) => server.once('listening', r));
  return { drain, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** Resolves once `n` requests are in flight. */
async function inFlight(drain: Drain, n: number) {
  while (drain.inFlight < n) await new Promise((r) => setImmediate(r));
}

describe('Drain', () => {
  it('refuses new requests while an in-flight one finishes, then closes', async () => {
    const release = gate();
    const { drain, url } = await start((d) =>
      new Hono()
        .use('*', (c, next) => d().refuseNew((p) => p === '/readyz')(c, next))
        .get('/slow', async (c) => {
          await release.opened;
          return c.text('finished');
        })
        .get('/readyz', (c) => c.text(d().draining ? 'draining' : 'ready', d().draining ? 503 : 200))
        .get('/other', (c) => c.text('other')),
    );
    const slow = fetch(`${url}/slow`);
    await inFlight(drain, 1);
    const closed = drain.shutdown(60_000);
    expect(drain.draining).toBe(true);

    const ready = await fetch(`${url}/readyz`);
    expect([ready.status, await ready.text()]).toEqual([503, 'draining']);
    const refused = await fetch(`${url}/other`);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('connection')).toBe('close');
    expect((await refused.json()).error.code).toBe('shutting_down');

    release.open();
    expect(await (await slow).text()).toBe('finished');
    await closed;
    expect(drain.deadline.aborted).toBe(false);
    await expect(fetch(`${url}/other`)).rejects.toThrow();
  });

  it('aborts the deadline when a stream outlasts the grace period, so it can write a last frame', async () => {
    const { drain, url } = await start((d) =>
      new Hono().get('/stream', (c) =>
        stream(c, async (s) => {
          await s.write('first\n');
          await new Promise<void>((r) => d().deadline.addEventListener('abort', () => r(), { once: true }));
          await s.write('final error frame\n');
        }),
      ),
    );
    const res = await fetch(`${url}/stream`);
    const body = res.text();
    await inFlight(drain, 1);
    const started = performance.now();
    await drain.shutdown(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    expect(drain.deadline.aborted).toBe(true);
    expect(await body).toBe('first\nfinal error frame\n');
  });

  it('lets go of a keep-alive connection whose response began before draining, once that response is done', async () => {
    const slow = gate();
    const streamEnd = gate();
    const other = gate();
    const { drain, url } = await start(() =>
      new Hono()
        .get('/slow', async (c) => {
          await slow.opened;
          return c.text('slow');
        })
        .get('/stream', (c) =>
          stream(c, async (s) => {
            await s.write('head\n');
            await streamEnd.opened;
          }),
        )
        .get('/other', async (c) => {
          await other.opened;
          return c.text('other');
        }),
    );
    // One keep-alive agent per request, so each has its own connection and the test sees its fate.
    const request = (path: string) => {
      const agent = new Agent({ keepAlive: true });
      return new Promise<{ res: IncomingMessage; closed: Promise<void> }>((resolve, reject) => {
        get(`${url}${path}`, { agent }, (res) => {
          const closed = new Promise<void>((r) => res.socket.once('close', () => r()));
          resolve({ res, closed });
        }).on('error', reject);
      });
    };
    const streaming = await request('/stream');
    const waiting = request('/slow');
    const holding = request('/other');
    await inFlight(drain, 3);
    const closed = drain.shutdown(60_000);

    // Headers not sent yet: the response says it closes.
    slow.open();
    const s = await waiting;
    expect(s.res.headers.connection).toBe('close');
    s.res.resume();
    await s.closed;
    // Headers sent with keep-alive before draining: the connection is ended once the stream is,
    // while another request is still in flight (the server is not closing yet).
    expect(streaming.res.headers.connection).toBe('keep-alive');
    streaming.res.resume();
    streamEnd.open();
    await streaming.closed;
    expect(drain.inFlight).toBe(1);

    other.open();
    (await holding).res.resume();
    await closed;
  });

  it('closes at once when nothing is in flight', async () => {
    const { drain } = await start(() => new Hono());
    const started = performance.now();
    await drain.shutdown(60_000);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('shutdownGraceSeconds', () => {
  it('defaults to 25, accepts 0 and fractions, refuses the rest naming the variable', () => {
    expect(shutdownGraceSeconds({})).toBe(25);
    expect(shutdownGraceSeconds({ SHUTDOWN_GRACE_SECONDS: '0' })).toBe(0);
    expect(shutdownGraceSeconds({ SHUTDOWN_GRACE_SECONDS: '2.5' })).toBe(2.5);
    for (const bad of ['-1', 'soon', 'Infinity'])
      expect(() => shutdownGraceSeconds({ SHUTDOWN_GRACE_SECONDS: bad })).toThrow(/SHUTDOWN_GRACE_SECONDS/);
  });
});
