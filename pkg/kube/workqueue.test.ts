import { describe, expect, it } from 'vitest';
import { Controller, TerminalError } from './controller.ts';
import { ItemExponentialRateLimiter, MaxOfRateLimiter, TokenBucketRateLimiter } from './rate-limiter.ts';
import { WorkQueue } from './workqueue.ts';

const noLimit = () => new ItemExponentialRateLimiter(1, 10);

describe('WorkQueue', () => {
  it('queues a key once however often it is added', async () => {
    const q = new WorkQueue(noLimit());
    q.add('a');
    q.add('a');
    q.add('b');
    expect(q.depth).toBe(2);
    expect(await q.get()).toBe('a');
    expect(await q.get()).toBe('b');
    expect(q.depth).toBe(0);
  });

  it('never hands out a key being processed; a re-add runs once more after done', async () => {
    const q = new WorkQueue(noLimit());
    q.add('a');
    const key = await q.get();
    q.add('a');
    q.add('a');
    expect(q.depth).toBe(0); // held back while processing
    q.done(key as string);
    expect(q.depth).toBe(1);
    expect(await q.get()).toBe('a');
    q.done('a');
    expect(q.depth).toBe(0);
  });

  it('wakes a waiting getter and returns undefined after shutdown', async () => {
    const q = new WorkQueue(noLimit());
    const waiting = q.get();
    q.add('x');
    expect(await waiting).toBe('x');
    const after = q.get();
    q.shutDown();
    expect(await after).toBeUndefined();
    q.add('y');
    expect(q.depth).toBe(0);
  });

  it('keeps the earliest deadline of delayed adds', async () => {
    const q = new WorkQueue(noLimit());
    q.addAfter('k', 10_000);
    q.addAfter('k', 20);
    expect(q.delayedCount).toBe(1);
    const t0 = Date.now();
    expect(await q.get()).toBe('k');
    expect(Date.now() - t0).toBeLessThan(2000);
  });
});

describe('rate limiters', () => {
  it('per-key exponential backoff doubles from the base up to the cap and resets on forget', () => {
    const r = new ItemExponentialRateLimiter(5, 1_000_000);
    const delays = Array.from({ length: 5 }, () => r.when('k'));
    expect(delays).toEqual([5, 10, 20, 40, 80]);
    expect(r.when('other')).toBe(5);
    for (let i = 0; i < 40; i++) r.when('k');
    expect(r.when('k')).toBe(1_000_000);
    r.forget('k');
    expect(r.when('k')).toBe(5);
  });

  it('the token bucket allows the burst, then spaces requests at the rate', () => {
    let now = 0;
    const b = new TokenBucketRateLimiter(10, 3, () => now);
    expect([b.when(), b.when(), b.when()]).toEqual([0, 0, 0]);
    expect(b.when()).toBe(100);
    expect(b.when()).toBe(200);
    now = 1000;
    expect(b.when()).toBe(0);
  });

  it('max-of takes the longest wait', () => {
    let now = 0;
    const r = new MaxOfRateLimiter(
      new ItemExponentialRateLimiter(5, 1000),
      new TokenBucketRateLimiter(1, 1, () => now),
    );
    expect(r.when('a')).toBe(5);
    expect(r.when('a')).toBe(1000);
    now = 10_000;
    expect(r.when('a')).toBe(20);
  });
});

describe('Controller', () => {
  const settle = (c: Controller) =>
    new Promise<void>((resolve) => {
      const t = setInterval(() => {
        if (c.queue.depth === 0 && c.queue.processingCount === 0 && c.queue.delayedCount === 0) {
          clearInterval(t);
          resolve();
        }
      }, 2);
    });

  it('never reconciles one key twice at once, and reconciles a key changed mid-run once more', async () => {
    let active = 0;
    let maxActive = 0;
    const runs: string[] = [];
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const c = new Controller({
      name: 't',
      workers: 4,
      rateLimiter: noLimit(),
      reconcile: async (key) => {
        active++;
        maxActive = Math.max(maxActive, active);
        runs.push(key);
        if (runs.length === 1) await gate;
        active--;
        return undefined;
      },
    });
    c.start();
    c.enqueue('a');
    await new Promise((r) => setTimeout(r, 20));
    c.enqueue('a');
    c.enqueue('a');
    release();
    await new Promise((r) => setTimeout(r, 20));
    await settle(c);
    expect(runs).toEqual(['a', 'a']);
    expect(maxActive).toBe(1);
    await c.stop();
  });

  it('requeues errors with backoff, not terminal errors; counts programming errors as panics', async () => {
    const calls = new Map<string, number>();
    const c = new Controller({
      name: 't',
      rateLimiter: new ItemExponentialRateLimiter(1, 4),
      reconcile: async (key) => {
        const n = (calls.get(key) ?? 0) + 1;
        calls.set(key, n);
        if (key === 'flaky' && n < 3) throw new Error('transient');
        if (key === 'terminal') throw new TerminalError('bad spec');
        if (key === 'panic' && n < 2) (undefined as unknown as { x: () => void }).x();
        return undefined;
      },
    });
    c.start();
    for (const k of ['flaky', 'terminal', 'panic']) c.enqueue(k);
    await settle(c);
    expect(calls.get('flaky')).toBe(3);
    expect(calls.get('terminal')).toBe(1);
    expect(calls.get('panic')).toBe(2);
    expect(c.panics).toBe(1);
    expect(c.errors).toBe(4);
    expect(c.queue.numRequeues('flaky')).toBe(0); // forgotten after success
    await c.stop();
  });

  it('honours requeueAfter', async () => {
    const at: number[] = [];
    const c = new Controller({
      name: 't',
      reconcile: async () => {
        at.push(Date.now());
        return at.length === 1 ? { requeueAfterMs: 60 } : undefined;
      },
    });
    c.start();
    c.enqueue('k');
    await new Promise((r) => setTimeout(r, 20));
    await settle(c);
    expect(at).toHaveLength(2);
    expect((at[1] as number) - (at[0] as number)).toBeGreaterThanOrEqual(55);
    await c.stop();
  });

  it('stop aborts running reconciles at once and a restart gets a fresh queue', async () => {
    let aborted = false;
    const c = new Controller({
      name: 't',
      reconcile: (_key, signal) =>
        new Promise((resolve) => {
          signal.addEventListener('abort', () => {
            aborted = true;
            resolve(undefined);
          });
        }),
    });
    c.start();
    c.enqueue('k');
    await new Promise((r) => setTimeout(r, 10));
    await c.stop();
    expect(aborted).toBe(true);
    c.enqueue('dropped-while-stopped');
    c.start();
    expect(c.queue.depth).toBe(0);
    await c.stop();
  });
});
