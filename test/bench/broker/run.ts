/**
 * Broker benchmark: `node test/bench/broker/run.ts` (BENCH_SECONDS sets each load phase, default 10).
 * The broker runs as its own process (so its RSS is measured alone); load comes from autocannon and
 * raw HTTP SSE watchers in this process. Prints a table and writes results.json beside this file.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import autocannon from 'autocannon';
import { MemoryMessageStore } from '../../../pkg/broker/messages/memory-store.ts';
import { fanOut } from './fanout.ts';
import { startBrokerProcess } from './process.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const BYTE_CAP = 256 * 1024 * 1024;
const results: Record<string, number | string> = {};

/**
 * A broker process of its own, fresh for each scenario where what earlier scenarios left behind would
 * distort it: the SSE fan-out and the 1M-message fill would
 * otherwise run on a heap that the 1.3M-span OTLP phase grew to a gigabyte (major GC pauses).
 */
const startBroker = () =>
  startBrokerProcess({ BROKER_MAX_MESSAGES: '2000000', BROKER_MAX_MESSAGE_BYTES: String(BYTE_CAP) });
let broker = await startBroker();
let url = broker.url;
const rssNow = () => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${broker.proc.pid}/status`, 'utf8'));
  return Math.round(Number(m?.[1] ?? 0) / 1024);
};
const rssMb = async () => {
  await new Promise((r) => setTimeout(r, 500));
  return rssNow();
};
/** RSS once V8's memory reducer has run: polled until it stops falling for 3 s (at most 30 s). */
const settledRssMb = async () => {
  let last = rssNow();
  let stableSince = performance.now();
  const end = performance.now() + 30_000;
  while (performance.now() < end && performance.now() - stableSince < 3000) {
    await new Promise((r) => setTimeout(r, 500));
    const now = rssNow();
    if (now < last - 1) stableSince = performance.now();
    last = Math.min(last, now);
  }
  return last;
};
const freshBroker = async () => {
  broker.proc.kill('SIGTERM');
  await broker.exited;
  broker = await startBroker();
  url = broker.url;
};
// Setup requests retry once: a keep-alive socket closed by the server as a request goes out resets.
const send = async (path: string, init: RequestInit): Promise<Response> => {
  try {
    return await fetch(`${url}${path}`, init);
  } catch {
    return fetch(`${url}${path}`, init);
  }
};
const post = (path: string, body: unknown) =>
  send(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

const phase = (name: string) => console.log(`[bench] ${name}`);
// Never leave the broker behind, whatever ends this process.
process.on('exit', () => broker.proc.kill('SIGKILL'));
process.on('uncaughtException', (err) => {
  console.error(`[bench] failed: ${err.message}\n--- broker output ---\n${broker.output().slice(-3000)}`);
  broker.proc.kill('SIGKILL');
  process.exit(1);
});
results['RSS idle (MB)'] = await rssMb();
phase('POST /messages');

// 1. POST /messages at concurrency 50.
const msgBody = JSON.stringify({
  conversation_id: 'bench',
  query_id: 'bench-q',
  messages: [{ role: 'user', content: 'What is the capital of France? Answer in one word.' }],
});
const postRun = await autocannon({
  url: `${url}/messages`,
  connections: 50,
  duration: SECONDS,
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: msgBody,
});
results['POST /messages req/s'] = Math.round(postRun.requests.average);
results['POST /messages p99 (ms)'] = postRun.latency.p99;
results['RSS after POST (MB)'] = await rssMb();

// 2. GET /messages?limit=100 with 20k stored.
phase('GET /messages');
await send('/messages', { method: 'DELETE' });
const batch = Array.from({ length: 1000 }, (_, i) => ({
  role: 'user',
  content: `message ${i} of the paging set`,
}));
for (let i = 0; i < 20; i++)
  await post('/messages', { conversation_id: 'paging', query_id: 'q', messages: batch });
const getRun = await autocannon({ url: `${url}/messages?limit=100`, connections: 50, duration: SECONDS });
results['GET /messages?limit=100 req/s (20k stored)'] = Math.round(getRun.requests.average);
results['GET p99 (ms)'] = getRun.latency.p99;
results['RSS after GET (MB)'] = await rssMb();

// 3. OTLP JSON ingest, 100 spans per export.
phase('OTLP');
const hex = (n: number, len: number) => n.toString(16).padStart(len, '0');
const spans = Array.from({ length: 100 }, (_, i) => ({
  traceId: hex(1 + Math.floor(i / 10), 32),
  spanId: hex(i + 1, 16),
  name: `span-${i}`,
  kind: 1,
  startTimeUnixNano: '1700000000000000000',
  endTimeUnixNano: '1700000000100000000',
  attributes: [{ key: 'svc.session.id', value: { stringValue: 'bench' } }],
}));
const otlpBody = JSON.stringify({
  resourceSpans: [
    {
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'bench' } }] },
      scopeSpans: [{ scope: { name: 'bench' }, spans }],
    },
  ],
});
const otlpRun = await autocannon({
  url: `${url}/v1/traces`,
  connections: 20,
  duration: SECONDS,
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: otlpBody,
});
results['OTLP JSON spans/s'] = Math.round(otlpRun.requests.average * spans.length);
results['RSS after OTLP (MB)'] = await rssMb();
await send('/traces', { method: 'DELETE' });

// 4. SSE fan-out: 1,000 watchers of /messages?watch=true, 200 messages/s, on a fresh broker.
phase('SSE fan-out');
await freshBroker();
results['RSS of the fresh broker (MB)'] = await rssMb();
const fan = await fanOut(url, { watchers: 1000, rate: 200, seconds: SECONDS });
results['SSE watchers'] = fan.watchers;
results['SSE delivered fraction'] = fan.delivered.toFixed(4);
results['SSE latency p50 (ms)'] = fan.p50;
results['SSE latency p99 (ms)'] = fan.p99;
results['RSS after SSE (MB)'] = await rssMb();

// 5. 1M stored messages stay under the byte cap (the store's estimate and the heap it really uses).
phase('1M messages');
await freshBroker();
const big = Array.from({ length: 1000 }, (_, i) => ({
  role: 'assistant',
  content: `stored message number ${i} with a little text`,
}));
const bigBody = JSON.stringify({ conversation_id: 'million', query_id: 'q', messages: big });
for (let i = 0; i < 1000; i += 4)
  await Promise.all(
    [0, 1, 2, 3].map(() =>
      send('/messages', { method: 'POST', headers: { 'content-type': 'application/json' }, body: bigBody }),
    ),
  );
const status = (await (await send('/memory-status', {})).json()) as { total_messages: number };
const ready = (await (await send('/readyz', {})).json()) as { memory: { heapUsed: number } };
results['messages held after 1M posted'] = status.total_messages;
results['byte cap (MB)'] = BYTE_CAP / 1024 / 1024;
results['heap used after 1M messages (MB)'] = Math.round(ready.memory.heapUsed / 1024 / 1024);
results['RSS after 1M messages (MB)'] = await rssMb();
results['RSS after 1M messages, settled (MB)'] = await settledRssMb();

// 6. The same load into a MemoryMessageStore in this process, measured after a full GC: what the
// store really holds against its byte cap (the broker's RSS above also holds V8's grown heap).
phase('store heap after GC');
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
gc();
const heapBase = process.memoryUsage().heapUsed;
const store = new MemoryMessageStore({
  caps: { maxItems: 2_000_000, maxBytes: BYTE_CAP, conversations: 100 },
  defaultTtlSeconds: 3600,
});
for (let i = 0; i < 1000; i++)
  await store.append({ conversation_id: 'million', query_id: 'q', messages: big });
gc();
results['store heap after GC, 1M posted (MB)'] = Math.round(
  (process.memoryUsage().heapUsed - heapBase) / 1024 / 1024,
);
results['store messages held'] = (await store.status()).total_messages;

broker.proc.kill('SIGTERM');
await broker.exited;

const width = Math.max(...Object.keys(results).map((k) => k.length));
console.log(`\nBroker benchmark (${SECONDS} s phases; machine shared with other work)\n`);
for (const [k, v] of Object.entries(results)) console.log(`${k.padEnd(width)}  ${v}`);
writeFileSync(
  join(import.meta.dirname, 'results.json'),
  `${JSON.stringify({ at: new Date().toISOString(), seconds: SECONDS, results }, null, 2)}\n`,
);
