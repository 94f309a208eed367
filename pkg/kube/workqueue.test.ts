import { describe, expect, it } from 'vitest';
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

  it('drops a delayed add on request, and never hands that key out for it', async () => {
    const q = new WorkQueue();
    q.addAfter('gone', 20);
    q.addAfter('kept', 20);
    q.dropDelayed('gone');
    q.dropDelayed('never-added'); // no-op
    expect(q.delayedCount).toBe(1);
    expect(await q.get()).toBe('kept');
    await new Promise((r) => setTimeout(r, 40));
    expect(q.depth).toBe(0);
    q.shutDown();
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
