/**
 * SSE delivery latency of the broker (issue 17, item 2): `node test/bench/broker/sse-latency.ts`
 * (BENCH_SECONDS per phase, default 10). On a fresh in-memory `berth broker` process each phase:
 * - chunk write → SSE delivery: 50 streams, each with one `GET /stream/{query}` watcher, each
 *   written 50 chunks/s (`POST /stream/{query}` with its send time in the content) after a first
 *   second of the same load that is not measured: 50 streams starting at the same instant on a
 *   fresh process measure V8 compiling the hot path (most of the slowest 1 % fell in those first
 *   250 ms). The p99 over the whole run, first second included, is reported beside it;
 * - 200 and 1,000 watchers of `/messages?watch=true` at 200 messages/s (fanout.ts).
 * Writes sse-latency-results.json beside this file (keyed by SSE_FLUSH_MODE label if given, so
 * before/after runs sit side by side).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chunkDelivery } from './chunk-delivery.ts';
import { fanOut } from './fanout.ts';
import { startBrokerProcess } from './process.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const STREAMS = 50;
const RATE = 50;

const label = process.env.SSE_BENCH_LABEL ?? 'current';
const results: Record<string, number | string> = {};
const broker = await startBrokerProcess();
try {
  console.log(`[bench] chunk write → SSE, ${STREAMS} streams × ${RATE} chunks/s`);
  const d = await chunkDelivery(broker.url, { streams: STREAMS, rate: RATE, seconds: SECONDS });
  results['chunk → SSE delivered'] = d.delivered.toFixed(4);
  results['chunk → SSE p50 (ms)'] = d.p50;
  results['chunk → SSE p99 (ms)'] = d.p99;
  results['chunk → SSE max (ms)'] = d.max;
  results['chunk → SSE p99, first second included (ms)'] = d.p99All;
  for (const watchers of [200, 1000]) {
    console.log(`[bench] SSE ${watchers} watchers @200 msg/s`);
    const f = await fanOut(broker.url, { watchers, rate: 200, seconds: SECONDS });
    results[`SSE ${watchers} watchers delivered`] = f.delivered.toFixed(4);
    results[`SSE ${watchers} watchers p50 (ms)`] = f.p50;
    results[`SSE ${watchers} watchers p99 (ms)`] = f.p99;
  }
} finally {
  broker.proc.kill('SIGTERM');
  await broker.exited;
}

const file = join(import.meta.dirname, 'sse-latency-results.json');
const all = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
all[label] = { at: new Date().toISOString(), seconds: SECONDS, results };
writeFileSync(file, `${JSON.stringify(all, null, 2)}\n`);
const width = Math.max(...Object.keys(results).map((k) => k.length));
console.log(`\nSSE latency (${label}, ${SECONDS} s phases)\n`);
for (const [k, v] of Object.entries(results)) console.log(`${k.padEnd(width)}  ${v}`);
