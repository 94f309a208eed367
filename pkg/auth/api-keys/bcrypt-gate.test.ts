import bcrypt from 'bcryptjs';
import { describe, expect, it } from 'vitest';
import { BcryptGate } from './bcrypt-gate.ts';
import { BcryptPool } from './bcrypt-pool.ts';

/** A comparison the test finishes by hand, to hold slots and queue places. */
function heldCompares() {
  const held: Array<(ok: boolean) => void> = [];
  return {
    held,
    compare: () => new Promise<boolean>((resolve) => held.push(resolve)),
    releaseAll(ok = false) {
      for (const r of held.splice(0)) r(ok);
    },
  };
}

describe('BcryptGate', () => {
  it('allows a burst of failed attempts per key, then refuses without comparing until a token refills', async () => {
    let now = 0;
    let compares = 0;
    const gate = new BcryptGate({
      perKeyBurst: 3,
      perKeyRefillMs: 6000,
      now: () => now,
      compare: async () => {
        compares++;
        return false;
      },
    });
    for (let i = 0; i < 3; i++)
      expect(await gate.compare('pk-a', 's', 'h')).toEqual({ kind: 'compared', ok: false });
    expect(await gate.compare('pk-a', 's', 'h')).toEqual({ kind: 'limited', scope: 'key', retryAfterSec: 6 });
    expect(compares).toBe(3);
    // Another key has its own budget.
    expect((await gate.compare('pk-b', 's', 'h')).kind).toBe('compared');
    now += 3000;
    expect(await gate.compare('pk-a', 's', 'h')).toMatchObject({ kind: 'limited', retryAfterSec: 3 });
    now += 3000;
    expect((await gate.compare('pk-a', 's', 'h')).kind).toBe('compared');
    expect(gate.stats).toEqual({ compares: 5, limitedPerKey: 2, limitedOverall: 0 });
  });

  it('gives a successful attempt its token back: a correct secret never uses up the budget', async () => {
    const gate = new BcryptGate({ perKeyBurst: 2, compare: async () => true });
    for (let i = 0; i < 20; i++)
      expect(await gate.compare('pk-a', 's', 'h')).toEqual({ kind: 'compared', ok: true });
  });

  it('runs at most maxConcurrent comparisons and queues at most maxQueued; the rest are refused at once', async () => {
    const h = heldCompares();
    const gate = new BcryptGate({ maxConcurrent: 1, maxQueued: 2, perKeyBurst: 100, compare: h.compare });
    const keys = ['pk-1', 'pk-2', 'pk-3', 'pk-4', 'pk-5'];
    const attempts = keys.map((k) => gate.compare(k, 's', 'h'));
    await new Promise((r) => setImmediate(r));
    expect(h.held.length).toBe(1); // one running
    expect(gate.queued).toBe(2);
    expect(await attempts[3]).toEqual({ kind: 'limited', scope: 'overall', retryAfterSec: 1 });
    expect(await attempts[4]).toEqual({ kind: 'limited', scope: 'overall', retryAfterSec: 1 });
    // Each release lets one queued comparison run, never more than one at a time.
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setImmediate(r));
      expect(h.held.length).toBe(1);
      h.releaseAll();
    }
    expect(await Promise.all(attempts.slice(0, 3))).toEqual(
      Array.from({ length: 3 }, () => ({ kind: 'compared', ok: false })),
    );
    expect(gate.stats.compares).toBe(3);
  });

  it('counts attempts in flight against the key: a simultaneous burst of new secrets is cut at the burst size', async () => {
    const h = heldCompares();
    const gate = new BcryptGate({ maxConcurrent: 4, maxQueued: 100, perKeyBurst: 5, compare: h.compare });
    const attempts = Array.from({ length: 50 }, () => gate.compare('pk-a', 's', 'h'));
    // Answered while the first five are still comparing (they are held).
    const limited = await Promise.all(attempts.slice(5));
    expect(limited.every((r) => r.kind === 'limited' && r.scope === 'key')).toBe(true);
    expect(h.held.length).toBe(4);
    h.releaseAll();
    await new Promise((r) => setImmediate(r));
    h.releaseAll();
    expect((await Promise.all(attempts.slice(0, 5))).every((r) => r.kind === 'compared')).toBe(true);
  });
});

describe('BcryptPool', () => {
  it('compares on a worker thread, the event loop free meanwhile', async () => {
    const pool = new BcryptPool(1);
    try {
      const hash = bcrypt.hashSync('sk-right', 10);
      let ticks = 0;
      const timer = setInterval(() => ticks++, 5);
      const [right, wrong] = await Promise.all([
        pool.compare('sk-right', hash),
        pool.compare('sk-wrong', hash),
      ]);
      clearInterval(timer);
      expect([right, wrong]).toEqual([true, false]);
      // Two comparisons at cost 10 take ~100 ms or more: the loop kept ticking through them.
      expect(ticks).toBeGreaterThan(5);
      expect(await pool.compare('x', 'not-a-bcrypt-hash')).toBe(false);
    } finally {
      await pool.stop();
    }
  });
});
