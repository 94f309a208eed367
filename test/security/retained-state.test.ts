/**
 * Issue 26 item 10: the API service's memory grew over a run of generated requests. Requests that
 * name things the caller makes up — namespaces, objects, kinds, paths, request ids — must leave
 * nothing behind: after many distinct hostile requests, the metric series, the Buffers kept alive
 * and the live heap are where they were after the first few hundred. The service runs as `berth
 * up` runs it: unconfined, its informer cache watching every namespace, so every namespace a caller
 * names is "served from the cache".
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHARED_CACHE } from '../../pkg/api/index.ts';
import { type RunningGateway, startGatewayServer } from '../../pkg/gateway/server.ts';
import { InformerCache } from '../../pkg/kube/cache.ts';
import { captureErrors } from '../fuzz/capture.ts';
import { liveHeap } from '../fuzz/runner.ts';
import { createNamespace, kubeConfig } from '../support/kube.ts';

const errors = captureErrors();
let ns: string;
let cache: InformerCache;
let api: RunningGateway;
beforeAll(async () => {
  ns = await createNamespace('sec-retained');
  const kc = kubeConfig('gateway');
  cache = InformerCache.of({ kc, logger: errors.logger }, SHARED_CACHE);
  cache.start();
  await cache.waitForSync(60_000);
  api = await startGatewayServer({
    kc,
    namespace: ns,
    cache,
    logger: errors.logger,
    port: 0,
    host: '127.0.0.1',
    env: { AUTH_MODE: 'open' },
    bcryptCost: 4,
  });
}, 120_000);
afterAll(async () => {
  await api?.close();
  await cache?.stop();
});

const FAMILIES = ['agents', 'teams', 'queries', 'models', 'evaluators', 'evaluations'];

/** One round of requests, each naming something new. */
async function hostileRound(n: number): Promise<Record<number, number>> {
  const statuses: Record<number, number> = {};
  const one = async (i: number) => {
    const made = `x${randomBytes(5).toString('hex')}${i}`;
    const family = FAMILIES[i % FAMILIES.length];
    const requests: Array<[string, string, unknown?]> = [
      ['GET', `/v1/namespaces/${made}/${family}`],
      ['GET', `/v1/namespaces/${made}/${family}/${made}`],
      ['PATCH', `/v1/namespaces/${made}/${family}/${made}`, { metadata: { labels: { a: 'b' } } }],
      ['GET', `/v1/resources/api/v1/${made}/${made}`],
      ['GET', `/${made}/${made}?${made}=1`],
    ];
    for (const [method, path, body] of requests) {
      const res = await api.app.fetch(
        new Request(`http://api.local${path}`, {
          method,
          headers: {
            'x-request-id': made,
            'accept-encoding': 'gzip',
            ...(body ? { 'content-type': 'application/json' } : {}),
          },
          ...(body ? { body: JSON.stringify(body) } : {}),
        }),
      );
      await res.arrayBuffer();
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    }
  };
  for (let i = 0; i < n; i += 16) await Promise.all(Array.from({ length: 16 }, (_, j) => one(i + j)));
  return statuses;
}

/** The service's own series (the process's `nodejs_*` ones change with GC kinds and handle types). */
const series = async () =>
  (await (await api.app.fetch(new Request('http://api.local/metrics'))).text())
    .split('\n')
    .filter((l) => l.startsWith('berth_')).length;

describe('requests naming made-up things leave nothing behind', () => {
  it('metric series, kept Buffers and the live heap stay where they were', async () => {
    const warm = await hostileRound(320);
    expect(Number(Object.keys(warm).find((s) => Number(s) >= 500) ?? 0), JSON.stringify(warm)).toBe(0);
    const seriesBefore = await series();
    await liveHeap();
    const before = process.memoryUsage();
    const heapBefore = await liveHeap();
    const statuses = await hostileRound(3_072);
    const heapAfter = await liveHeap();
    const after = process.memoryUsage();
    const grown = {
      series: (await series()) - seriesBefore,
      arrayBuffersMB: (after.arrayBuffers - before.arrayBuffers) / 1e6,
      heapMB: (heapAfter - heapBefore) / 1e6,
    };
    console.log('retained after 15,360 hostile requests', JSON.stringify({ statuses, grown }));
    // Series are labelled by route pattern, method and status: none is keyed by what a caller names.
    expect(grown.series).toBe(0);
    // Before the fix, each made-up namespace's list kept a 64 KiB pool slab alive (~200 MB at 3,072).
    expect(grown.arrayBuffersMB).toBeLessThan(4);
    expect(grown.heapMB).toBeLessThan(8);
    expect(errors.lines()).toEqual([]);
  }, 300_000);
});
