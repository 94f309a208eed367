/**
 * Chunk benchmark, memory vs Redis: `node test/bench/broker/redis-chunks.ts` (REDIS_URL, default the
 * local Redis; CHUNK_BENCH_SAMPLES latency samples, default 1000;
 * CHUNK_BENCH_GAP_MS between them, default 25). Each backend runs as `berth broker` in a process
 * of its own (CHUNK_BACKEND=redis for Redis, two of them for the cross-replica figure). Measures bulk NDJSON ingest (chunks/s, one and four
 * concurrent uploads) and chunk write → SSE delivery latency (POST of one chunk until its frame is
 * read from `GET /stream/{query}`), plus, for Redis, the same across two replicas (POST to A, SSE
 * from B). Writes redis-chunks-results.json beside this file. Keys live under a fresh prefix that is
 * deleted at the end (the Redis may be shared: never flushed).
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { chunkPoster, startBrokerProcess } from './process.ts';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const SAMPLES = Number(process.env.CHUNK_BENCH_SAMPLES ?? 1000);
// One chunk every 25 ms (40 tokens/s, a fast model): longer than the SSE write-coalescing window
// (SSE_FLUSH_MS, 20 ms), so each chunk finds the stream idle and is written at once — what is
// measured is the store and delivery path, not the window.
const GAP_MS = Number(process.env.CHUNK_BENCH_GAP_MS ?? 25);
const prefix = `bench:chunks:${randomUUID()}:`;
const results: Record<string, Record<string, number | string>> = {};
const now = () => performance.timeOrigin + performance.now();
const line = (i: number) =>
  JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion.chunk',
    created: 1700000000,
    model: 'bench-model',
    choices: [{ index: 0, delta: { content: `token ${i} ` }, finish_reason: null }],
  });

async function ingest(url: string, query: string, lines: number, posts: number): Promise<number> {
  const body = `${Array.from({ length: lines }, (_, i) => line(i)).join('\n')}\n`;
  let n = 0;
  for (let p = 0; p < posts; p++) {
    const res = await fetch(`${url}/stream/${query}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson' },
      body,
    });
    const r = (await res.json()) as { chunks_received: number };
    if (res.status !== 200) throw new Error(`ingest answered ${res.status}: ${JSON.stringify(r)}`);
    n += r.chunks_received;
  }
  return n;
}

async function bulk(url: string, writers: number): Promise<number> {
  const t0 = performance.now();
  const counts = await Promise.all(
    Array.from({ length: writers }, (_, w) => ingest(url, `bulk-${writers}-${w}`, 20_000, 5)),
  );
  const total = counts.reduce((a, b) => a + b, 0);
  return Math.round(total / ((performance.now() - t0) / 1000));
}

/** POSTs one chunk every `gapMs` to `writeUrl`, reads them back from `readUrl`'s SSE; latencies in ms. */
async function latency(
  writeUrl: string,
  readUrl: string,
  query: string,
): Promise<{ lat: number[]; drainMs: number }> {
  const lat: number[] = [];
  let ready!: () => void;
  const connected = new Promise<void>((r) => {
    ready = r;
  });
  const req = http.get(`${readUrl}/stream/${query}?wait-for-query=60`, (res) => {
    res.setEncoding('utf8');
    res.once('data', () => ready());
    res.on('data', (text: string) => {
      const t = now();
      for (const m of text.matchAll(/"content":"t(\d+\.?\d*)"/g)) lat.push(t - Number(m[1]));
    });
  });
  await connected;
  const { post: postOne, close } = chunkPoster(writeUrl, query);
  // The warm-up chunk arrives once the broker's delivery has caught up with everything written
  // before (after the bulk phase, the reader may still be working through its backlog).
  const t0 = performance.now();
  await postOne(JSON.stringify({ choices: [{ delta: { content: `t${now()}` } }] }));
  while (lat.length === 0) await new Promise((r) => setTimeout(r, 1));
  const drainMs = performance.now() - t0;
  lat.length = 0;
  for (let i = 0; i < SAMPLES; i++) {
    await postOne(JSON.stringify({ choices: [{ delta: { content: `t${now()}` } }] }));
    await new Promise((r) => setTimeout(r, GAP_MS));
  }
  const end = Date.now() + 5000;
  while (lat.length < SAMPLES && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  req.destroy();
  close();
  if (lat.length < SAMPLES) throw new Error(`only ${lat.length} of ${SAMPLES} chunks arrived`);
  return { lat, drainMs: Math.round(drainMs) };
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round((s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0) * 100) / 100;
};

/** `berth broker` as its own process, chunks in memory or in Redis (under this run's key prefix). */
async function broker(backend: 'memory' | 'redis') {
  const env: NodeJS.ProcessEnv =
    backend === 'redis' ? { CHUNK_BACKEND: 'redis', REDIS_URL, REDIS_KEY_PREFIX: prefix } : {};
  const b = await startBrokerProcess(env);
  return {
    url: b.url,
    stop: async () => {
      b.proc.kill('SIGTERM');
      await b.exited;
    },
  };
}

try {
  for (const backend of ['memory', 'redis'] as const) {
    console.log(`[bench] ${backend}`);
    const a = await broker(backend);
    const b = backend === 'redis' ? await broker(backend) : undefined;
    try {
      const r: Record<string, number | string> = {};
      await ingest(a.url, 'warm', 2000, 2);
      r['bulk NDJSON chunks/s (1 upload)'] = await bulk(a.url, 1);
      r['bulk NDJSON chunks/s (4 concurrent uploads)'] = await bulk(a.url, 4);
      const { lat: same, drainMs } = await latency(a.url, a.url, 'lat');
      r['live delivery caught up after the bulk phase (ms)'] = drainMs;
      r['write → SSE p50 (ms)'] = pct(same, 50);
      r['write → SSE p99 (ms)'] = pct(same, 99);
      r['write → SSE max (ms)'] = pct(same, 100);
      if (b) {
        const { lat: cross } = await latency(a.url, b.url, 'lat-cross');
        r['write on A → SSE on B p50 (ms)'] = pct(cross, 50);
        r['write on A → SSE on B p99 (ms)'] = pct(cross, 99);
        r['write on A → SSE on B max (ms)'] = pct(cross, 100);
      }
      results[backend] = r;
    } finally {
      await a.stop();
      await b?.stop();
    }
  }
} finally {
  const redis = new Redis(REDIS_URL);
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) await redis.del(...keys);
  } while (cursor !== '0');
  redis.disconnect();
}

const keys = [...new Set(Object.values(results).flatMap((r) => Object.keys(r)))];
const width = Math.max(...keys.map((k) => k.length));
console.log(`\nChunk benchmark (${SAMPLES} latency samples, one per ${GAP_MS} ms; machine shared)\n`);
console.log(`${''.padEnd(width)}  ${'memory'.padStart(10)}  ${'redis'.padStart(10)}`);
for (const k of keys)
  console.log(
    `${k.padEnd(width)}  ${String(results.memory?.[k] ?? '–').padStart(10)}  ${String(results.redis?.[k] ?? '–').padStart(10)}`,
  );
writeFileSync(
  join(import.meta.dirname, 'redis-chunks-results.json'),
  `${JSON.stringify({ at: new Date().toISOString(), samples: SAMPLES, gapMs: GAP_MS, results }, null, 2)}\n`,
);
