import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

export interface FanOutResult {
  watchers: number;
  delivered: number;
  p50: number;
  p99: number;
}

/**
 * `watchers` raw HTTP SSE connections to /messages?watch=true (in a worker thread); this thread
 * posts `rate` messages per second carrying their send time, after `warmupSeconds` (default 2) of
 * unmeasured messages at the same rate. Reports the delivered fraction of measured
 * message×watcher pairs and the delivery latency percentiles.
 */
export async function fanOut(
  url: string,
  /** `postUrl`: post to another broker than the watched one (cross-replica delivery). */
  o: { watchers: number; rate: number; seconds: number; warmupSeconds?: number; postUrl?: string },
): Promise<FanOutResult> {
  const worker = new Worker(join(import.meta.dirname, 'watchers.ts'), {
    workerData: { url, watchers: o.watchers },
  });
  const next = (type: string) =>
    new Promise<Record<string, unknown>>((resolve) => {
      const on = (m: Record<string, unknown>) => {
        if (m.type === type) {
          worker.off('message', on);
          resolve(m);
        }
      };
      worker.on('message', on);
    });
  await next('ready');
  // Warm-up at the same rate, not measured (its messages carry no timestamp the watchers match):
  // the first second pays JIT compilation and connection set-up on both sides.
  const posts: Promise<unknown>[] = [];
  /** Posts `rate` messages per second for `seconds`; returns how many. */
  const postAt = async (seconds: number, content: () => string) => {
    const total = o.rate * seconds;
    const interval = 1000 / o.rate;
    const start = performance.now();
    for (let i = 0; i < total; i++) {
      const wait = start + i * interval - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      posts.push(
        fetch(`${o.postUrl ?? url}/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            conversation_id: 'fan',
            query_id: 'fan',
            messages: [{ role: 'user', content: content() }],
          }),
        }).then((r) => r.arrayBuffer()),
      );
    }
    return total;
  };
  await postAt(o.warmupSeconds ?? 2, () => 'warm-up');
  const total = await postAt(o.seconds, () => `t${performance.timeOrigin + performance.now()}`);
  await Promise.all(posts);
  const expected = total * o.watchers;
  const deadline = performance.now() + 10_000;
  for (;;) {
    worker.postMessage({ type: 'count' });
    const { received } = (await next('count')) as { received: number };
    if (received >= expected || performance.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  worker.postMessage({ type: 'stop' });
  const { latencies } = (await next('done')) as { latencies: number[] };
  await worker.terminate();
  latencies.sort((a, b) => a - b);
  const pct = (p: number) =>
    Math.round((latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0) * 10) / 10;
  return { watchers: o.watchers, delivered: latencies.length / expected, p50: pct(0.5), p99: pct(0.99) };
}
