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
import http from 'node:http';
import { join } from 'node:path';
import { fanOut } from './fanout.ts';
import { chunkPoster, startBrokerProcess } from './process.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const STREAMS = 50;
const RATE = 50;
const WARMUP_MS = 1000;
const now = () => performance.timeOrigin + performance.now();

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round((s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0) * 100) / 100;
};

/**
 * One stream: a watcher and a writer posting `RATE` chunks/s for the warm-up and then `seconds`;
 * latencies in ms (`lat`: after the warm-up, `all`: the whole run). Returns the chunks measured.
 */
async function stream(
  url: string,
  query: string,
  seconds: number,
  lat: number[],
  all: number[],
): Promise<number> {
  let ready!: () => void;
  const connected = new Promise<void>((r) => {
    ready = r;
  });
  let received = 0;
  const req = http.get(`${url}/stream/${query}?wait-for-query=60`, (res) => {
    res.setEncoding('utf8');
    res.once('data', () => ready());
    res.on('data', (text: string) => {
      const t = now();
      for (const m of text.matchAll(/"content":"([tw])(\d+\.?\d*)"/g)) {
        const ms = t - Number(m[2]);
        all.push(ms);
        if (m[1] === 'w') continue;
        received++;
        lat.push(ms);
      }
    });
  });
  const { post, close } = chunkPoster(url, query);
  await post(JSON.stringify({ choices: [{ delta: { content: 'warm-up' } }] }));
  await connected;
  const gap = 1000 / RATE;
  const measured = performance.now() + WARMUP_MS;
  const end = measured + seconds * 1000;
  let sent = 0;
  let next = performance.now();
  while (performance.now() < end) {
    const warm = performance.now() < measured;
    await post(JSON.stringify({ choices: [{ delta: { content: `${warm ? 'w' : 't'}${now()}` } }] }));
    if (!warm) sent++;
    next += gap;
    const wait = next - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  const until = Date.now() + 5000;
  while (received < sent && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  req.destroy();
  close();
  return sent;
}

const label = process.env.SSE_BENCH_LABEL ?? 'current';
const results: Record<string, number | string> = {};
const broker = await startBrokerProcess();
try {
  console.log(`[bench] chunk write → SSE, ${STREAMS} streams × ${RATE} chunks/s`);
  const lat: number[] = [];
  const whole: number[] = [];
  const sent = await Promise.all(
    Array.from({ length: STREAMS }, (_, i) => stream(broker.url, `lat-${i}`, SECONDS, lat, whole)),
  );
  const total = sent.reduce((a, b) => a + b, 0);
  results['chunk → SSE delivered'] = (lat.length / total).toFixed(4);
  results['chunk → SSE p50 (ms)'] = pct(lat, 50);
  results['chunk → SSE p99 (ms)'] = pct(lat, 99);
  results['chunk → SSE p99, first second included (ms)'] = pct(whole, 99);
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
