import { describe, expect, it } from 'vitest';
import { jitteredBackoff, sleep } from './backoff.ts';

describe('jitteredBackoff', () => {
  it('doubles from the initial delay, stays within ±20 % and never leaves [initial, max]', () => {
    for (const r of [0, 0.5, 0.999]) {
      const seq = Array.from({ length: 8 }, (_, n) => jitteredBackoff(n, 1000, 30_000, () => r));
      expect(seq[0]).toBe(r === 0 ? 1000 : Math.round(1000 * (0.8 + 0.4 * r))); // floor despite jitter
      expect(seq[3]).toBeGreaterThanOrEqual(6400);
      expect(seq[3]).toBeLessThanOrEqual(9600);
      expect(Math.max(...seq)).toBeLessThanOrEqual(30_000);
      expect(seq[7]).toBe(r === 0 ? 24_000 : 30_000);
    }
  });

  it('sleep ends early when aborted', async () => {
    const ctl = new AbortController();
    const t0 = Date.now();
    const p = sleep(10_000, ctl.signal);
    ctl.abort();
    await p;
    expect(Date.now() - t0).toBeLessThan(1000);
  });
});
