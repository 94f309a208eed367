import { describe, expect, it } from 'vitest';
import { MemoryIdempotencyStore } from './memory-store.ts';
import { idempotencyStoreContract } from './store.contract.ts';

idempotencyStoreContract('memory', async (claimMs) => new MemoryIdempotencyStore({ claimMs }));

describe('MemoryIdempotencyStore', () => {
  it('forgets the oldest keys past its cap and finished keys past their TTL', async () => {
    let now = 0;
    const s = new MemoryIdempotencyStore({ maxKeys: 2, ttlMs: 1000, now: () => now });
    const r = { status: 200, body: '{}', contentType: 'application/json' };
    for (const k of ['a', 'b', 'c']) {
      await s.begin(k);
      await s.finish(k, r);
    }
    expect((await s.begin('a')).state).toBe('new'); // evicted
    expect((await s.begin('c')).state).toBe('done');
    now = 2000;
    expect((await s.begin('c')).state).toBe('new');
  });
});
