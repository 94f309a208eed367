/**
 * Generated requests against every operation of the broker's /openapi.json (issue 18 item 2), on
 * the in-memory stores and on the durable ones (PostgreSQL + Redis): never a 5xx, never a stack
 * trace, every 4xx explained, no error logged, and the heap back where it was once the stores are
 * purged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brokerConfig } from '../../pkg/broker/config.ts';
import { type RunningBroker, startBroker } from '../../pkg/broker/server.ts';
import { durableConfig } from '../broker/harness.ts';
import { captureErrors } from './capture.ts';
import { operations, requests, type Vocabulary } from './openapi.ts';
import { fuzz, fuzzCases, fuzzTimeout, liveHeap } from './runner.ts';

const vocab: Vocabulary = {
  known: {
    query: ['q-1', 'q-2'],
    queryId: ['q-1', 'q-2'],
    query_id: ['q-1', 'q-2'],
    conversationId: ['c-1', 'c-2'],
    conversation_id: ['c-1', 'c-2'],
    sessionId: ['s-1'],
    session_id: ['s-1'],
    traceId: ['0af7651916cd43dd8448eb211c80319c'],
  },
  names: ['n-1'],
};

const PURGE = ['/messages', '/conversations', '/stream', '/events', '/sessions', '/traces'];
async function purge(b: RunningBroker) {
  for (const p of PURGE) expect((await fetch(`${b.url}${p}`, { method: 'DELETE' })).status).toBe(200);
}

// The durable stores run a fifth of the cases: each write is a PostgreSQL transaction.
for (const [backend, cases] of [
  ['memory', fuzzCases()],
  ['durable', Math.ceil(fuzzCases() / 5)],
] as const) {
  describe(`the broker on ${backend} stores`, () => {
    const errors = captureErrors();
    let b: RunningBroker;
    beforeAll(async () => {
      const base = brokerConfig();
      const durable = backend === 'durable' ? await durableConfig() : {};
      const sse = { ...base.sse, heartbeatMs: 200 };
      b = await startBroker(
        { ...base, ...durable, port: 0, host: '127.0.0.1', sse, bodyLimitBytes: 1 << 20 },
        errors.logger,
      );
    });
    afterAll(() => b?.close());

    it(
      `answers ${cases} generated requests without a 5xx, and keeps its memory`,
      async () => {
        const doc = await (await fetch(`${b.url}/openapi.json`)).json();
        const ops = operations(doc);
        expect(ops.length).toBeGreaterThan(25);
        const arb = requests(ops, vocab);
        const target = { url: b.url, fetch: b.app.fetch };
        // Warm up (JIT, pools, caches), then measure the heap with empty stores before and after.
        await fuzz(target, arb, { cases: 500, errorLog: errors.lines });
        await purge(b);
        const before = await liveHeap();
        const stats = await fuzz(target, arb, { cases, errorLog: errors.lines });
        await purge(b);
        const after = await liveHeap();
        console.log(
          `broker (${backend}) fuzz`,
          JSON.stringify({
            ...stats,
            byOperation: undefined,
            heapMB: [before, after].map((x) => Math.round(x / 1e6)),
          }),
        );
        expect(stats.cases).toBeGreaterThanOrEqual(cases);
        // Every documented operation was exercised.
        for (const op of ops)
          expect(stats.byOperation[`${op.method} ${op.path}`], `${op.method} ${op.path}`).toBeGreaterThan(0);
        expect(errors.lines(), 'no error logged').toEqual([]);
        expect(after - before, 'heap growth in bytes').toBeLessThan(24 * 1024 * 1024);
        expect((await fetch(`${b.url}/health`)).status).toBe(200);
      },
      fuzzTimeout(cases),
    );
  });
}
