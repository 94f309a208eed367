/**
 * Chunk write → SSE delivery, as the issue-17/32 rows measure it: `streams` queries, each with one
 * `GET /stream/{query}` watcher and one writer sending `rate` chunks per second (its send time in the
 * content), as one JSON POST each or as lines of one NDJSON upload (`ChunkWrite`). The first
 * second is the same load, not measured: 50 streams starting at one instant on a fresh process
 * measure V8 compiling the hot path. Latencies in ms.
 */
import http from 'node:http';
import { spawnProcess } from '../../support/process.ts';
import { chunkPoster, leanChunkPoster, ndjsonPoster } from './process.ts';

// BENCH_WARMUP_MS: a longer warm-up shows the tail of a process that has run the load for a while.
const WARMUP_MS = Number(process.env.BENCH_WARMUP_MS ?? 1000);
const now = () => performance.timeOrigin + performance.now();

export const pct = (sorted: number[], p: number) =>
  Math.round((sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0) * 100) / 100;

/**
 * How the writers send: `post`, one JSON `POST /stream/{query}` per chunk over a kept-alive
 * connection (Node's `http.request`); `lean`, the same requests from a minimal HTTP/1.1 client
 * (`leanChunkPoster`: the generator's own client cost out of the timing); `ndjson`, each chunk a
 * line of one long NDJSON POST per stream, as the engine (and the reference's executors) write a
 * query's stream.
 */
export type ChunkWrite = 'post' | 'lean' | 'ndjson';

const POSTERS: Record<ChunkWrite, typeof chunkPoster> = {
  post: chunkPoster,
  lean: leanChunkPoster,
  ndjson: ndjsonPoster,
};

async function stream(
  url: string,
  query: string,
  o: { rate: number; seconds: number; watchUrl?: string | undefined; write?: ChunkWrite | undefined },
  lat: number[],
  all: number[],
  sendingDone: () => Promise<void>,
): Promise<number> {
  let ready!: () => void;
  const connected = new Promise<void>((r) => {
    ready = r;
  });
  let received = 0;
  const req = http.get(`${o.watchUrl ?? url}/stream/${query}?wait-for-query=60`, (res) => {
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
  const { post, close } = POSTERS[o.write ?? 'post'](url, query);
  await post(JSON.stringify({ choices: [{ delta: { content: 'warm-up' } }] }));
  await connected;
  const gap = 1000 / o.rate;
  const measured = performance.now() + WARMUP_MS;
  const end = measured + o.seconds * 1000;
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
  // No stream is torn down while another still sends: the row is the steady load, and 50 watchers
  // and uploads closing at once would land in the last chunks' latency otherwise.
  await sendingDone();
  req.destroy();
  await close();
  return sent;
}

export interface DeliveryResult {
  delivered: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
  /** p99 over the whole run, the warm-up second included. */
  p99All: number;
}

export async function chunkDelivery(
  url: string,
  /** `watchUrl`: watch on another broker than the one written to (cross-replica delivery). */
  o: {
    streams: number;
    rate: number;
    seconds: number;
    prefix?: string;
    watchUrl?: string | undefined;
    write?: ChunkWrite | undefined;
  },
): Promise<DeliveryResult> {
  const lat: number[] = [];
  const all: number[] = [];
  let left = o.streams;
  let allSent!: () => void;
  const everySent = new Promise<void>((r) => {
    allSent = r;
  });
  const sendingDone = () => {
    if (--left === 0) allSent();
    return everySent;
  };
  const sent = await Promise.all(
    Array.from({ length: o.streams }, (_, i) =>
      stream(url, `${o.prefix ?? 'lat'}-${i}`, o, lat, all, sendingDone),
    ),
  );
  const total = sent.reduce((a, b) => a + b, 0);
  lat.sort((a, b) => a - b);
  all.sort((a, b) => a - b);
  return {
    delivered: lat.length / total,
    p50: pct(lat, 50),
    p99: pct(lat, 99),
    p999: pct(lat, 99.9),
    max: Math.round((lat.at(-1) ?? 0) * 100) / 100,
    p99All: pct(all, 99),
  };
}

/**
 * `chunkDelivery` in a load-generator process of its own. The latency is timed in the generator, so
 * its own state counts: in one long-lived process, after earlier phases (a large seed, a thousand
 * watchers), p50 through Redis rose from ~1.2 to ~3 ms on an unchanged broker, and a fresh
 * generator against the same broker measured ~1.2–1.7 again (docs/broker.md). Rows run it this way.
 */
export async function chunkDeliveryInChild(
  url: string,
  o: Parameters<typeof chunkDelivery>[1],
): Promise<DeliveryResult> {
  const child = spawnProcess(process.execPath, [import.meta.filename, JSON.stringify({ url, o })], {
    cwd: process.cwd(),
    env: process.env,
  });
  const code = await child.exited;
  const line = child.output().match(/^delivery (.*)$/m)?.[1];
  if (code !== 0 || !line) throw new Error(`chunk delivery run failed (${code}):\n${child.output()}`);
  return JSON.parse(line) as DeliveryResult;
}

if (process.argv[1] === import.meta.filename && process.argv[2]) {
  const { url, o } = JSON.parse(process.argv[2]) as { url: string; o: Parameters<typeof chunkDelivery>[1] };
  console.log(`delivery ${JSON.stringify(await chunkDelivery(url, o))}`);
}
