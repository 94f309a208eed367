/**
 * Cancellation, timeouts, unreachable models, retries on 429/5xx and concurrency, against the fake
 * model over real HTTPS.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type BerthQueryEngine, createQueryEngine } from '../../pkg/engine/index.ts';
import { createLogger } from '../../pkg/log/index.ts';
import { type FakeModelServer, startFakeModel } from '../fixtures/fake-model.ts';
import { freePort, MapLookup, model, query, run } from './support.ts';

let fake: FakeModelServer;
let engine: BerthQueryEngine;
const lookup = new MapLookup();

beforeAll(async () => {
  fake = await startFakeModel();
  for (const name of ['slow', 'flaky', 'broken', 'busy'])
    lookup.put('model', model(name, { baseUrl: fake.url }));
  lookup.put('model', model('gone', { baseUrl: `https://127.0.0.1:${await freePort()}/v1` }));
  fake.script('slow', { delayMs: 10_000 });
  fake.script('busy', { delayMs: 50, reply: (req) => `answer to ${req.messages.at(-1)?.content}` });
  engine = createQueryEngine({ lookup, ca: fake.ca, logger: createLogger({ level: 'silent' }) });
});

afterAll(async () => {
  await engine?.close();
  await fake?.close();
});

describe('resilience', () => {
  it('cancellation aborts the in-flight model call at once', async () => {
    const ac = new AbortController();
    const before = fake.requests.length;
    const pending = engine.run(query({ type: 'model', name: 'slow' }, 'wait'), run(ac.signal));
    await vi.waitFor(() => expect(fake.requests.length).toBe(before + 1), { interval: 5 });
    const t0 = performance.now();
    ac.abort();
    const out = await pending;
    expect(out).toEqual({
      phase: 'canceled',
      reason: 'Canceled',
      message: 'query canceled',
      conversationId: undefined,
    });
    expect(performance.now() - t0).toBeLessThan(500);
    await vi.waitFor(() => expect(fake.requests.at(-1)?.aborted).toBe(true), { interval: 5 });
  });

  it('spec.timeout ends a slow call with an error naming the timeout', async () => {
    const t0 = performance.now();
    const out = await engine.run(query({ type: 'model', name: 'slow' }, 'wait', { timeout: '300ms' }), run());
    expect(out).toMatchObject({
      phase: 'error',
      reason: 'Timeout',
      message: 'query timed out after 300ms (spec.timeout)',
    });
    expect(performance.now() - t0).toBeLessThan(2000);
  });

  it('an unreachable model is an error with the network reason', async () => {
    const out = await engine.run(query({ type: 'model', name: 'gone' }, 'x'), run());
    expect(out).toMatchObject({
      phase: 'error',
      reason: 'ModelError',
      message: expect.stringContaining('ECONNREFUSED'),
    });
  });

  it('429 twice then success: retried with backoff', async () => {
    fake.script('flaky', { fail: { status: 429, times: 2 } });
    const out = await engine.run(query({ type: 'model', name: 'flaky' }, 'retry me'), run());
    expect(out).toMatchObject({ phase: 'done', reason: 'Succeeded', content: 'echo: retry me' });
    expect(fake.requests.filter((r) => r.model === 'flaky')).toHaveLength(3);
  });

  it('a persistent 500 fails after the retries with the status', async () => {
    fake.script('broken', { fail: { status: 500, times: 100 } });
    const out = await engine.run(query({ type: 'model', name: 'broken' }, 'x'), run());
    expect(out).toMatchObject({
      phase: 'error',
      reason: 'ModelError',
      message: expect.stringContaining('HTTP 500'),
    });
    expect(fake.requests.filter((r) => r.model === 'broken')).toHaveLength(3);
  });

  it('20 concurrent queries each get their own answer', async () => {
    const outs = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        engine.run(query({ type: 'model', name: 'busy' }, `q${i}`), run()),
      ),
    );
    expect(outs.map((o) => (o.phase === 'done' ? o.content : o.phase))).toEqual(
      Array.from({ length: 20 }, (_, i) => `answer to q${i}`),
    );
    expect(engine.stats().running).toBe(0);
  });
});
