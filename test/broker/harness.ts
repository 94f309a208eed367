import { randomUUID } from 'node:crypto';
import { EventSource } from 'eventsource';
import { afterAll, inject } from 'vitest';
import { type BrokerConfig, brokerConfig } from '../../pkg/broker/config.ts';
import { type RunningBroker, startBroker } from '../../pkg/broker/server.ts';
import { createLogger } from '../../pkg/log/index.ts';
import { redisUrl } from '../support/services.ts';
import { TestDatabases } from './pg-harness.ts';
import { dropPrefix } from './redis-support.ts';

/**
 * BERTH_TEST_BROKER=durable runs every broker suite against the durable backends: messages, events
 * and sessions in PostgreSQL (a fresh database per broker, cloned from a template migrated once per
 * test file) and chunks in Redis (a key prefix per broker, deleted after the file).
 */
export const durableBrokers = process.env.BERTH_TEST_BROKER === 'durable';

let dbs: TestDatabases | undefined;
const prefixes: string[] = [];
// Whatever made a durable broker in this file (the durable project, or a suite that asks for one,
// like the broker fuzz run): its databases and key prefixes go with the file.
afterAll(async () => {
  await dbs?.dropAll();
  if (!prefixes.length) return;
  const url = redisUrl(inject('services'));
  for (const p of prefixes.splice(0)) await dropPrefix(url, p);
});

/** Backend settings of a durable test broker (its own database and key prefix). */
export async function durableConfig(): Promise<Partial<BrokerConfig>> {
  dbs ??= new TestDatabases();
  const prefix = `test:broker:${randomUUID()}:`;
  prefixes.push(prefix);
  return {
    backends: { messages: 'postgres', events: 'postgres', sessions: 'postgres', chunks: 'redis' },
    databaseUrl: await dbs.fresh(),
    redisUrl: redisUrl(inject('services')),
    redisKeyPrefix: prefix,
  };
}

/** An in-process broker on a free loopback port, quiet, with test-friendly timings. */
export async function startTestBroker(overrides: Partial<BrokerConfig> = {}): Promise<RunningBroker> {
  const base = brokerConfig();
  const durable = durableBrokers ? await durableConfig() : {};
  return startBroker(
    { ...base, ...durable, port: 0, host: '127.0.0.1', sse: { ...base.sse, heartbeatMs: 200 }, ...overrides },
    createLogger({ level: 'silent' }),
  );
}

export async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export async function json<T = any>(res: Response | Promise<Response>): Promise<T> {
  return (await res).json() as Promise<T>;
}

export interface Collected {
  data: string[];
  ids: string[];
  es: EventSource;
  /** Resolves once `n` messages arrived (rejects after `ms`). */
  until(n: number, ms?: number): Promise<void>;
  close(): void;
}

/** Opens an EventSource (the real client) and records every message. */
export function collect(url: string, headers: Record<string, string> = {}): Collected {
  const es = new EventSource(url, {
    fetch: (input, init) =>
      fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }),
  });
  const data: string[] = [];
  const ids: string[] = [];
  const waiters = new Set<() => void>();
  es.onmessage = (m) => {
    data.push(m.data);
    ids.push(m.lastEventId);
    for (const w of waiters) w();
  };
  return {
    data,
    ids,
    es,
    close: () => es.close(),
    until(n, ms = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (data.length >= n) {
            waiters.delete(check);
            clearTimeout(t);
            resolve();
          }
        };
        const t = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`got ${data.length} of ${n} SSE messages from ${url}`));
        }, ms);
        waiters.add(check);
        check();
      });
    },
  };
}

/** Reads a raw SSE response body until `stop` matches the accumulated text (or the stream ends). */
export async function readSse(
  res: Response,
  stop: (text: string) => boolean = () => false,
  ms = 10_000,
): Promise<string> {
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const dec = new TextDecoder();
  let text = '';
  const timer = setTimeout(() => reader.cancel(), ms);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += dec.decode(value, { stream: true });
      if (stop(text)) break;
    }
  } finally {
    clearTimeout(timer);
    await reader.cancel().catch(() => {});
  }
  return text;
}

export { eventually } from '../support/wait.ts';
