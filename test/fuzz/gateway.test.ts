/**
 * Generated requests against every operation of the API service's /openapi.json (issue 18 item
 * 2), on the real API server, with a broker behind /v1/broker: never a 5xx, never a stack trace,
 * every 4xx explained, no error logged, the heap back where it was afterwards.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHARED_CACHE } from '../../pkg/api/index.ts';
import type { RunningBroker } from '../../pkg/broker/server.ts';
import { type RunningGateway, startGatewayServer } from '../../pkg/gateway/server.ts';
import { InformerCache } from '../../pkg/kube/cache.ts';
import { startTestBroker } from '../broker/harness.ts';
import { createNamespace, kubeConfig } from '../support/kube.ts';
import { captureErrors } from './capture.ts';
import { gatewayVocabulary } from './gateway-vocab.ts';
import { operations, requests } from './openapi.ts';
import { fuzz, fuzzCases, fuzzTimeout, liveHeap } from './runner.ts';
import { seedCollections } from './seed.ts';

const errors = captureErrors();
let ns: string;
let broker: RunningBroker;
let cache: InformerCache;
let api: RunningGateway;
beforeAll(async () => {
  ns = await createNamespace('fuzz-api');
  broker = await startTestBroker();
  const kc = kubeConfig('gateway');
  // As `berth up` and an unconfined `berth api` run it: the cache watches every namespace, so a
  // namespace a request makes up is answered from the cache too (and must leave nothing there).
  cache = InformerCache.of({ kc, logger: errors.logger }, SHARED_CACHE);
  cache.start();
  await cache.waitForSync(30_000);
  api = await startGatewayServer({
    kc,
    namespace: ns,
    cache,
    brokerUrl: broker.url,
    logger: errors.logger,
    port: 0,
    host: '127.0.0.1',
    env: { AUTH_MODE: 'open' },
    bcryptCost: 4,
    bodyLimitBytes: 1 << 20,
    compatWaitTimeoutMs: 2_000,
  });
});
afterAll(async () => {
  await api?.close();
  await cache?.stop();
  await broker?.close();
});

describe('the API service under generated requests', () => {
  it(
    `answers ${fuzzCases()} of them without a 5xx, and keeps its memory`,
    async () => {
      const run = randomBytes(2).toString('hex');
      const names = [`fz${run}-a`, `fz${run}-b`];
      const vocab = gatewayVocabulary(ns, names);
      const doc = await (await fetch(`${api.url}/openapi.json`)).json();
      const ops = operations(doc);
      expect(ops.length, JSON.stringify(doc).slice(0, 500)).toBeGreaterThan(50);
      const arb = requests(ops, vocab);
      const target = { url: api.url, fetch: api.app.fetch };
      const unseeded = await seedCollections(api.url, ops, vocab, ns);
      expect(unseeded, 'collections without an object to fuzz').toEqual([]);
      await fuzz(target, arb, { cases: 500, errorLog: errors.lines });
      const before = await liveHeap();
      const memBefore = process.memoryUsage();
      const stats = await fuzz(target, arb, { cases: fuzzCases(), errorLog: errors.lines });
      const after = await liveHeap();
      const memAfter = process.memoryUsage();
      console.log(
        'api fuzz',
        JSON.stringify({
          ...stats,
          byOperation: undefined,
          heapMB: [before, after].map((x) => Math.round(x / 1e6)),
          memoryMB: Object.fromEntries(
            Object.entries(memAfter).map(([k, v]) => [
              k,
              [memBefore[k as 'rss'], v].map((x) => Math.round(x / 1e6)),
            ]),
          ),
        }),
      );
      expect(stats.cases).toBeGreaterThanOrEqual(fuzzCases());
      for (const op of ops)
        expect(stats.byOperation[`${op.method} ${op.path}`], `${op.method} ${op.path}`).toBeGreaterThan(0);
      expect(errors.lines(), 'no error logged').toEqual([]);
      expect(after - before, 'heap growth in bytes').toBeLessThan(32 * 1024 * 1024);
      // Buffers are not in the heap: ListBodyCache entries once kept 64 KiB pool slabs alive there.
      const buffers = memAfter.arrayBuffers - memBefore.arrayBuffers;
      expect(buffers, 'ArrayBuffer growth in bytes (after the same collections)').toBeLessThan(
        8 * 1024 * 1024,
      );
      expect((await fetch(`${api.url}/health`)).status).toBe(200);
    },
    fuzzTimeout(),
  );
});
