/**
 * The aggregator's bounds with a fetcher standing in for the network: sources per namespace,
 * fetches in flight (per request and per process), failures remembered briefly, cache bytes.
 */
import { describe, expect, it } from 'vitest';
import type { Client } from '../../kube/client/types.ts';
import { createLogger } from '../../log/index.ts';
import { ItemsAggregator } from './aggregator.ts';
import type { GuardedFetcher, RawAnswer } from './guarded-fetch.ts';
import type { SourceMap } from './store.ts';

const manifest = (n: number) => JSON.stringify({ version: 1, items: [{ name: `item-${n}`, type: 'agent' }] });

/** Answers each URL after `delayMs`; counts calls and the most in flight at once. */
function fakeFetcher(answer: (url: URL) => RawAnswer, delayMs = 5) {
  const stats = { calls: 0, inFlight: 0, peak: 0 };
  const fetcher = {
    async get(url: URL): Promise<RawAnswer> {
      stats.calls++;
      stats.inFlight++;
      stats.peak = Math.max(stats.peak, stats.inFlight);
      await new Promise((r) => setTimeout(r, delayMs));
      stats.inFlight--;
      return answer(url);
    },
  } as unknown as GuardedFetcher;
  return { fetcher, stats };
}

function sources(n: number, host = 'catalogue.example'): SourceMap {
  const data: Record<string, string> = {};
  for (let i = 0; i < n; i++)
    data[`s${String(i).padStart(3, '0')}`] = JSON.stringify({ url: `https://${host}/m${i}.json` });
  return { exists: true, data };
}

const base = {
  fetchTimeoutMs: 5_000,
  totalTimeoutMs: 10_000,
  cacheTtlMs: 60_000,
  logger: createLogger({ level: 'silent' }),
};
const client = {} as Client;

describe('ItemsAggregator bounds', () => {
  it('fetches the first maxSources sources (name order) and reports the rest inline', async () => {
    const { fetcher, stats } = fakeFetcher(
      (u) => ({ status: 200, body: manifest(Number(u.pathname.slice(2, -5))) }),
      1,
    );
    const agg = new ItemsAggregator({ ...base, fetcher, maxSources: 50 });
    const view = await agg.items(client, 'ns', sources(120));
    expect(stats.calls).toBe(50);
    expect(view.items).toHaveLength(50);
    expect(view.sources).toHaveLength(120);
    const skipped = view.sources.filter((s) => s.error);
    expect(skipped).toHaveLength(70);
    expect(skipped[0]?.name).toBe('s050');
    expect(skipped[0]?.error).toEqual({
      code: 'aggregator_timeout',
      message:
        'not fetched: the namespace has 120 sources and the aggregator fetches the first 50 (in name order)',
    });
  });

  it('keeps fetches in flight under the per-request and the process-wide limits', async () => {
    const { fetcher, stats } = fakeFetcher(() => ({ status: 200, body: manifest(0) }), 20);
    const agg = new ItemsAggregator({ ...base, fetcher, maxFetchesPerRequest: 3, maxConcurrentFetches: 4 });
    await agg.items(client, 'a', sources(10));
    expect(stats.peak).toBe(3);
    stats.peak = 0;
    // Three requests at once (other namespaces: nothing cached): 3 each, 4 in all.
    await Promise.all(['b', 'c', 'd'].map((ns) => agg.items(client, ns, sources(10))));
    expect(stats.peak).toBe(4);
  });

  it('remembers a failing source briefly instead of asking it again at every request', async () => {
    let now = 1_000_000;
    const realNow = Date.now;
    Date.now = () => now;
    try {
      const { fetcher, stats } = fakeFetcher(() => ({ status: 503, body: '' }), 1);
      const agg = new ItemsAggregator({ ...base, fetcher, failureTtlMs: 30_000 });
      for (let i = 0; i < 5; i++) {
        const view = await agg.items(client, 'ns', sources(1));
        expect(view.sources[0]?.error).toEqual({
          code: 'http_error',
          message: 'the source answered HTTP 503',
        });
      }
      expect(stats.calls).toBe(1);
      now += 30_000;
      await agg.items(client, 'ns', sources(1));
      expect(stats.calls).toBe(2);
    } finally {
      Date.now = realNow;
    }
  });

  it('bounds the cache by manifest bytes: large manifests push older ones out', async () => {
    const big = JSON.stringify({ items: [{ name: 'x', type: 'agent', blob: 'b'.repeat(400_000) }] });
    const { fetcher, stats } = fakeFetcher(() => ({ status: 200, body: big }), 1);
    const agg = new ItemsAggregator({ ...base, fetcher, cacheMaxBytes: 1_000_000 });
    await agg.items(client, 'ns', sources(5));
    expect(stats.calls).toBe(5);
    // Only the last two fit in 1 MB: the first three are fetched again.
    await agg.items(client, 'ns', sources(5));
    expect(stats.calls).toBe(8);
  });
});
