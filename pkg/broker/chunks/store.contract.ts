import { describe, expect, it } from 'vitest';
import { type ChunkStore, chunkJson } from './types.ts';

export function chunkStoreContract(name: string, make: () => Promise<ChunkStore>): void {
  describe(`ChunkStore contract: ${name}`, () => {
    it('stores chunks per query, completes once, and 404s (unknown) a never-seen query', async () => {
      const s = await make();
      expect((await s.complete('nope')).result).toBe('unknown');
      const [a] = await s.append('q', [{ n: 1 }, { n: 2 }]);
      expect(a && chunkJson(a)).toBe('{"n":1}');
      expect((await s.complete('q')).result).toBe('completed');
      expect((await s.complete('q')).result).toBe('already_completed');
      expect(s.state('q')?.completed).toBe(true);
      const page = await s.page('q', 0, 10);
      expect(page.items.map((e) => e.kind)).toEqual(['chunk', 'chunk', 'complete']);
      await s.close();
    });
    it('starts a new run after completion and keeps sequences through a purge', async () => {
      const s = await make();
      await s.append('q', [{ n: 1 }]);
      await s.complete('q');
      await s.append('q', [{ n: 2 }]);
      expect(s.state('q')).toMatchObject({ completed: false, runAfter: 2 });
      expect(await s.purge()).toBe(3);
      expect(s.state('q')).toBeUndefined();
      const [c] = await s.append('q', [{ n: 3 }]);
      expect(c?.seq).toBe(4);
      await s.close();
    });
  });
}
