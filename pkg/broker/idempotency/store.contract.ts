import { describe, expect, it } from 'vitest';
import type { IdempotencyStore } from './types.ts';

const ok = { status: 200, body: '{"deleted":3}', contentType: 'application/json' };

/** The same assertions for every backend; `make` gets a store whose claims expire after `claimMs`. */
export function idempotencyStoreContract(name: string, make: (claimMs: number) => Promise<IdempotencyStore>) {
  describe(`IdempotencyStore contract: ${name}`, () => {
    it('claims a key once, replays its finished response, and keeps keys apart', async () => {
      const s = await make(60_000);
      expect(await s.begin('k1')).toEqual({ state: 'new' });
      expect(await s.begin('k1')).toEqual({ state: 'busy' });
      await s.finish('k1', ok);
      expect(await s.begin('k1')).toEqual({ state: 'done', response: ok });
      expect(await s.begin('k2')).toEqual({ state: 'new' });
    });

    it('lets a key be tried again after an abandoned or expired claim', async () => {
      const s = await make(200);
      expect(await s.begin('a')).toEqual({ state: 'new' });
      await s.abandon('a');
      expect(await s.begin('a')).toEqual({ state: 'new' });
      expect(await s.begin('b')).toEqual({ state: 'new' });
      await new Promise((r) => setTimeout(r, 400)); // the claim's owner "died"
      expect(await s.begin('b')).toEqual({ state: 'new' });
      await s.finish('b', ok);
      await s.abandon('b'); // a finished key stays finished
      expect(await s.begin('b')).toEqual({ state: 'done', response: ok });
    });

    it('gives a key to exactly one of many concurrent claims', async () => {
      const s = await make(60_000);
      const results = await Promise.all(Array.from({ length: 20 }, () => s.begin('race')));
      expect(results.filter((r) => r.state === 'new')).toHaveLength(1);
    });
  });
}
