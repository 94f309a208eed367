import { describe, expect, it, vi } from 'vitest';
import { FlushScheduler } from './flush.ts';

const tick = () => new Promise((r) => setImmediate(r));

class Counter {
  flushes: number[] = [];
  flush(): void {
    this.flushes.push(performance.now());
  }
}

describe('adaptive flush scheduling', () => {
  it('idle: a few sinks are flushed right after the publishing code, a fan-out at the end of the turn', async () => {
    const s = new FlushScheduler({ intervalMs: 1000, loadedWrites: 10_000 });
    const one = new Counter();
    const seen: number[] = [];
    setImmediate(() => seen.push(one.flushes.length));
    s.mark(one);
    await Promise.resolve();
    // Flushed in a microtask: before any callback of the turn (the immediate queued first included).
    expect(one.flushes).toHaveLength(1);
    await tick();
    expect(seen).toEqual([1]);

    const many = Array.from({ length: 40 }, () => new Counter());
    const before: number[] = [];
    setImmediate(() => before.push(many.filter((c) => c.flushes.length > 0).length));
    for (const c of many) s.mark(c);
    await tick();
    await tick();
    // 40 sinks: left to the end of the turn, after the callbacks already queued; each once.
    expect(before).toEqual([0]);
    expect(many.every((c) => c.flushes.length === 1)).toBe(true);
  });

  it('idle: a frame is flushed within the event-loop turn, not after the window', async () => {
    const s = new FlushScheduler({ intervalMs: 1000, loadedWrites: 100 });
    const c = new Counter();
    for (let i = 0; i < 5; i++) {
      const marked = performance.now();
      s.mark(c);
      s.mark(c); // same turn: one flush
      await tick();
      await tick();
      expect(c.flushes).toHaveLength(i + 1);
      expect((c.flushes.at(-1) as number) - marked).toBeLessThan(50);
    }
    expect(s.coalescing).toBe(false);
  });

  // The window tests run on a fake clock: on a busy machine a real 110 ms timer can fire more than two
  // windows late, and the scheduler then rightly judges the gap an idle window.
  it('loaded: once a window wrote more than the budget, flushes wait for the window (or the budget)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'setImmediate', 'performance'] });
    try {
      const s = new FlushScheduler({ intervalMs: 100, loadedWrites: 20 });
      const sinks = Array.from({ length: 30 }, () => new Counter());
      for (const c of sinks) s.mark(c);
      await Promise.resolve();
      vi.advanceTimersByTime(0);
      expect(sinks.every((c) => c.flushes.length === 1)).toBe(true);
      // The next window judges the previous one: 30 writes > 20 → coalescing.
      vi.advanceTimersByTime(110);
      expect(s.coalescing).toBe(true);
      // Flushes are now spaced 30 sinks × 100 ms / 20 = 150 ms from the last one.
      for (const c of sinks) s.mark(c);
      await Promise.resolve();
      vi.advanceTimersByTime(39);
      expect(sinks[0]?.flushes).toHaveLength(1);
      vi.advanceTimersByTime(2);
      expect(sinks.every((c) => c.flushes.length === 2)).toBe(true);
      const [first, second] = (sinks[0] as Counter).flushes as [number, number];
      expect(Math.round(second - first)).toBe(150);
    } finally {
      vi.useRealTimers();
    }
  });

  it('goes back to immediate flushes when the load is gone', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'setImmediate', 'performance'] });
    try {
      const s = new FlushScheduler({ intervalMs: 20, loadedWrites: 5 });
      const sinks = Array.from({ length: 10 }, () => new Counter());
      for (const c of sinks) s.mark(c);
      await Promise.resolve();
      vi.advanceTimersByTime(25);
      expect(s.coalescing).toBe(true);
      vi.advanceTimersByTime(60); // quiet windows
      expect(s.coalescing).toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });

  it('loaded: spaces flushes by how many sinks the last one wrote (at most 250 ms), so writes stay within the budget', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'setImmediate', 'performance'] });
    try {
      const s = new FlushScheduler({ intervalMs: 50, loadedWrites: 10 });
      const sinks = Array.from({ length: 100 }, () => new Counter());
      for (const c of sinks) s.mark(c);
      await Promise.resolve();
      vi.advanceTimersByTime(0);
      expect(sinks.every((c) => c.flushes.length === 1)).toBe(true);
      vi.advanceTimersByTime(60);
      expect(s.coalescing).toBe(true);
      // 100 sinks × 50 ms / 10 = 500 ms, capped at 250 ms after the last flush (not the 50 ms window).
      for (const c of sinks) s.mark(c);
      await Promise.resolve();
      vi.advanceTimersByTime(189);
      expect(sinks[0]?.flushes).toHaveLength(1);
      vi.advanceTimersByTime(2);
      expect(sinks.every((c) => c.flushes.length === 2)).toBe(true);
      const [first, second] = (sinks[0] as Counter).flushes as [number, number];
      expect(Math.round(second - first)).toBe(250);
    } finally {
      vi.useRealTimers();
    }
  });
});
