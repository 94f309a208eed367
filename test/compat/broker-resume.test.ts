/**
 * The API's relay of a Query's chunk stream across a broker shutdown (docs/compat.md): a draining
 * broker pod ends its open streams with a `shutting_down` frame that has no id; the relay reopens
 * the stream through the same URL (the broker Service, now routing to another pod) with
 * `Last-Event-ID` and goes on, instead of failing the chat. Real brokers on a shared Redis chunk
 * store, behind a forwarding "Service" whose target the test switches as kube-proxy would.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryChunkStore } from '../../pkg/broker/chunks/memory-store.ts';
import { openBrokerStream } from '../../pkg/gateway/compat/broker-stream.ts';
import { shutdownFrame } from '../../pkg/http/index.ts';
import { brokerOn, dropPrefix, openStore, sharedRedisUrl, uniquePrefix } from '../broker/redis-support.ts';

const prefixes: string[] = [];
afterAll(async () => {
  for (const p of prefixes) await dropPrefix(sharedRedisUrl(), p);
});

/** A "Service": forwards each request to the current target (switched by the test). */
async function service(first: string) {
  let target = first;
  const server = http.createServer((req, res) => {
    const up = http.request(`${target}${req.url}`, { method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    route: (to: string) => {
      target = to;
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

const memory = () =>
  new MemoryChunkStore({ caps: { maxItems: 1000, maxBytes: 1 << 20 }, maxStreams: 10, ttlSeconds: 60 });
const chunk = (text: string) => JSON.stringify({ id: 'c', choices: [{ delta: { content: text } }] });
const post = (url: string, body: string) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then((r) => {
    expect(r.status).toBe(200);
    return r.arrayBuffer();
  });

describe('a streamed answer across a broker shutdown', () => {
  it('resumes on another broker after the last record received: no gap, no repeat, no shutdown frame', async () => {
    const keyPrefix = uniquePrefix();
    prefixes.push(keyPrefix);
    const [sx, sy] = await Promise.all([
      openStore({ url: sharedRedisUrl(), keyPrefix }),
      openStore({ url: sharedRedisUrl(), keyPrefix }),
    ]);
    const [x, y] = await Promise.all([brokerOn(sx), brokerOn(sy)]);
    const svc = await service(x.url);
    const ctl = new AbortController();
    try {
      await post(`${x.url}/stream/q1`, chunk('one'));
      const stream = await openBrokerStream(svc.url, 'q1', ctl.signal);
      expect((await stream.next()).value).toBe(chunk('one'));
      await post(`${x.url}/stream/q1`, chunk('two'));
      expect((await stream.next()).value).toBe(chunk('two'));
      // The pod drains: the Service routes to the other one, and the grace period ends its streams.
      svc.route(y.url);
      x.hub.endAll(shutdownFrame('the broker is shutting down; reconnect with Last-Event-ID to resume'));
      await post(`${y.url}/stream/q1`, chunk('three'));
      await post(`${y.url}/stream/q1/complete`, '');
      const rest: string[] = [];
      for await (const data of stream) rest.push(data);
      expect(rest).toEqual([chunk('three'), '[DONE]']);
    } finally {
      ctl.abort();
      await svc.close();
      await Promise.all([x.close(), y.close()]);
      await Promise.all([sx.close(), sy.close()]);
    }
  });

  it('passes the shutdown frame on when the broker it reaches does not have the stream (an in-memory replacement)', async () => {
    const [x, y] = await Promise.all([brokerOn(memory()), brokerOn(memory())]);
    const svc = await service(x.url);
    const ctl = new AbortController();
    try {
      await post(`${x.url}/stream/q2`, chunk('one'));
      const stream = await openBrokerStream(svc.url, 'q2', ctl.signal);
      expect((await stream.next()).value).toBe(chunk('one'));
      svc.route(y.url);
      const started = Date.now();
      x.hub.endAll(shutdownFrame('the broker is shutting down; reconnect with Last-Event-ID to resume'));
      const rest: string[] = [];
      for await (const data of stream) rest.push(data);
      expect(rest).toHaveLength(1);
      expect(JSON.parse(rest[0] as string)).toMatchObject({ error: { code: 'shutting_down' } });
      // Given up at the first 404, not after every retry.
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      ctl.abort();
      await svc.close();
      await Promise.all([x.close(), y.close()]);
    }
  });

  it('asks again when the stream has not started within the broker’s wait (a Query pending for its Memory)', async () => {
    const b = await brokerOn(memory());
    const ctl = new AbortController();
    try {
      const stream = await openBrokerStream(b.url, 'late', ctl.signal, { waitSeconds: 1 });
      const first = stream.next();
      // Past two of the broker's 1 s waits, the Query starts writing.
      await new Promise((r) => setTimeout(r, 2500));
      await post(`${b.url}/stream/late`, chunk('at last'));
      await post(`${b.url}/stream/late/complete`, '');
      expect((await first).value).toBe(chunk('at last'));
      const rest: string[] = [];
      for await (const data of stream) rest.push(data);
      expect(rest).toEqual(['[DONE]']);
    } finally {
      ctl.abort();
      await b.close();
    }
  }, 20_000);
});
