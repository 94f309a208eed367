/**
 * Where a live chunk watch starts on the Redis chunk backend (issue 27 item 6): a live watch on
 * replica B opened after a chunk was acknowledged on replica A must not deliver that chunk, even
 * while B's firehose reader has not read it yet; it delivers every later chunk — for the firehose
 * (`/stream?watch=true`) and for a query's stream (`/stream/{query}`). Two brokers share a
 * redis-server of the test's own; B reaches it through a TCP relay of the test, which holds back the
 * replies to B's reader connection (its XREAD) while the chunk is acknowledged and the watch opens.
 * Then the same after Redis was stopped and started again; while it is down a live watch is 503.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { EventSource } from 'eventsource';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brokerConfig } from '../../pkg/broker/config.ts';
import { type RunningBroker, startBroker } from '../../pkg/broker/server.ts';
import { freePort } from '../../pkg/kube/controlplane/ports.ts';
import { createLogger } from '../../pkg/log/index.ts';
import { OwnRedis, uniquePrefix } from '../broker/redis-support.ts';
import { eventually } from '../support/wait.ts';

let redis: OwnRedis;
let relay: Relay;
let a: RunningBroker;
let b: RunningBroker;

/** A TCP relay to Redis whose upstream sockets can be held (their replies stop flowing). */
interface Relay {
  url: string;
  upstreams: Set<Socket>;
  server: Server;
}

async function startRelay(target: number): Promise<Relay> {
  const upstreams = new Set<Socket>();
  const server = createServer((client) => {
    const up = createConnection({ host: '127.0.0.1', port: target });
    upstreams.add(up);
    client.pipe(up).pipe(client);
    const end = () => {
      upstreams.delete(up);
      client.destroy();
      up.destroy();
    };
    client.on('error', end).on('close', end);
    up.on('error', end).on('close', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return { url: `redis://127.0.0.1:${port}`, upstreams, server };
}

/** Holds back B's reader: the relay stops reading Redis's replies on the reader's upstream socket. */
async function holdReader(): Promise<() => void> {
  const admin = new Redis(redis.url);
  try {
    const list = String(await admin.client('LIST'));
    const ports = [...list.matchAll(/addr=127\.0\.0\.1:(\d+) [^\n]*name=berth-chunks-reader-/g)].map((m) =>
      Number(m[1]),
    );
    const held = [...relay.upstreams].filter((s) => ports.includes(s.localPort as number));
    expect(held.length, "B's reader connection through the relay").toBe(1);
    for (const s of held) s.pause();
    return () => {
      for (const s of held) s.resume();
    };
  } finally {
    admin.disconnect();
  }
}

async function broker(url: string, prefix: string): Promise<RunningBroker> {
  const base = brokerConfig();
  return startBroker(
    {
      ...base,
      port: 0,
      host: '127.0.0.1',
      backends: { ...base.backends, chunks: 'redis' },
      redisUrl: url,
      redisKeyPrefix: prefix,
    },
    createLogger({ level: 'silent' }),
  );
}

beforeAll(async () => {
  redis = new OwnRedis(await freePort());
  await redis.start();
  relay = await startRelay(redis.port);
  const prefix = uniquePrefix();
  a = await broker(redis.url, prefix);
  b = await broker(relay.url, prefix);
}, 60_000);
afterAll(async () => {
  await b?.close();
  await a?.close();
  relay?.server.close();
  for (const s of relay?.upstreams ?? []) s.destroy();
  await redis?.destroy();
});

function watcher(url: string) {
  const es = new EventSource(url);
  const ids: number[] = [];
  let open = false;
  es.onopen = () => {
    open = true;
  };
  es.onmessage = (m) => {
    if (m.lastEventId) ids.push(Number(m.lastEventId));
  };
  return { es, ids, opened: () => open };
}

async function chunk(text: string): Promise<number> {
  const res = await fetch(`${a.url}/stream/q`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta: { content: text } }],
    }),
  });
  expect(res.status, `chunk ${text}`).toBe(200);
  await res.arrayBuffer();
  const page = (await (await fetch(`${a.url}/stream?query=q&cursor=0&limit=1000`)).json()) as {
    items: Array<{ sequence: number }>;
  };
  return page.items.at(-1)?.sequence as number;
}

async function race(round: string): Promise<void> {
  const release = await holdReader();
  let earlier: number;
  let ws: Array<ReturnType<typeof watcher>>;
  try {
    earlier = await chunk(`${round}-earlier`);
    ws = [watcher(`${b.url}/stream?watch=true`), watcher(`${b.url}/stream/q`)];
    await eventually(() => ws.every((w) => w.opened()), 10_000);
  } finally {
    release();
  }
  const next = await chunk(`${round}-next`);
  expect(next).toBeGreaterThan(earlier);
  await eventually(() => ws.every((w) => w.ids.includes(next)), 10_000);
  for (const w of ws) w.es.close();
  expect(
    ws.map((w) => w.ids),
    `the firehose and the query's stream on B, opened after ${earlier} was acknowledged on A`,
  ).toEqual([[next], [next]]);
}

describe('a live chunk watch on one replica after a chunk acknowledged on another', () => {
  it('starts after that chunk, before and after a Redis outage', async () => {
    await race('before');

    await redis.stop();
    for (const path of ['/stream?watch=true', '/stream/q']) {
      const res = await fetch(`${b.url}${path}`);
      expect(res.status, `live ${path} while Redis is down`).toBe(503);
      await res.arrayBuffer();
    }
    await redis.start();
    // Both brokers are back (B's reader reconnected through the relay).
    await eventually(
      async () => {
        const res = await fetch(`${b.url}/readyz`);
        await res.arrayBuffer();
        return res.status === 200;
      },
      30_000,
      100,
    );
    await eventually(
      async () => {
        const res = await fetch(`${a.url}/readyz`);
        await res.arrayBuffer();
        return res.status === 200;
      },
      30_000,
      100,
    );

    await race('after');
  }, 120_000);
});
