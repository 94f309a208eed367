import { describe, expect, it } from 'vitest';
import { type ChunkStore, chunkJson, chunkText, type StoredChunk } from './types.ts';

const texts = (cs: Record<string, unknown>[]) => cs.map((c) => chunkText(c));

/** Waits until `cond` holds: a shared backend delivers to listeners asynchronously (through its reader). */
async function until(cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

export function chunkStoreContract(name: string, make: () => Promise<ChunkStore>): void {
  describe(`ChunkStore contract: ${name}`, () => {
    it('stores chunks per query, completes once, and 404s (unknown) a never-seen query', async () => {
      const s = await make();
      expect((await s.complete('nope')).result).toBe('unknown');
      const [a] = await s.append('q', texts([{ n: 1 }, { n: 2 }]));
      expect(a && chunkJson(a)).toBe('{"n":1}');
      expect((await s.complete('q')).result).toBe('completed');
      expect((await s.complete('q')).result).toBe('already_completed');
      expect((await s.state('q'))?.completed).toBe(true);
      const page = await s.page('q', 0, 10);
      expect(page.items.map((e) => e.kind)).toEqual(['chunk', 'chunk', 'complete']);
      await s.close();
    });
    it('starts a new run after completion and keeps sequences through a purge', async () => {
      const s = await make();
      let purges = 0;
      s.onPurge(() => purges++);
      await s.append('q', texts([{ n: 1 }]));
      await s.complete('q');
      await s.append('q', texts([{ n: 2 }]));
      expect(await s.state('q')).toMatchObject({ completed: false, runAfter: 2 });
      expect(await s.purge()).toBe(3);
      await until(() => purges === 1); // purge listeners end the open query streams
      expect(await s.state('q')).toBeUndefined();
      const [c] = await s.append('q', texts([{ n: 3 }]));
      expect(c?.seq).toBe(4);
      await s.close();
    });
    it('opens a stream with no chunks, and serves records as the firehose shape', async () => {
      const s = await make();
      expect(await s.append('empty', texts([]))).toEqual([]);
      expect(await s.state('empty')).toMatchObject({ query: 'empty', completed: false, runAfter: 0 });
      const [a] = await s.append('a', texts([{ error: { message: 'boom' } }]));
      const { marker } = await s.complete('a');
      expect(a?.isError).toBe(true);
      expect(JSON.parse(a?.json ?? '')).toMatchObject({ sequence: 1, query: 'a', type: 'chunk', chunk: {} });
      expect(marker && JSON.parse(marker.json)).toMatchObject({ sequence: 2, query: 'a', type: 'complete' });
      expect(marker && chunkJson(marker)).toBe('');
      await s.close();
    });
    it('pages per query and across the firehose by exclusive cursor, with totals', async () => {
      const s = await make();
      await s.append('a', texts([{ n: 1 }, { n: 2 }]));
      await s.append('b', texts([{ n: 3 }]));
      await s.append('a', texts([{ n: 4 }]));
      const all = await s.page(undefined, 0, 2);
      expect(all.items.map((e) => e.seq)).toEqual([1, 2]);
      expect(all).toMatchObject({ total: 4, hasMore: true });
      const rest = await s.page(undefined, 2, 10);
      expect(rest.items.map((e) => [e.seq, e.query])).toEqual([
        [3, 'b'],
        [4, 'a'],
      ]);
      expect(rest.hasMore).toBe(false);
      const a = await s.page('a', 1, 10);
      expect(a.items.map((e) => chunkJson(e))).toEqual(['{"n":2}', '{"n":4}']);
      expect(a).toMatchObject({ total: 3, hasMore: false });
      expect((await s.page('none', 0, 10)).items).toEqual([]);
      await s.close();
    });
    it('tells listeners every record once, in sequence order, and moves the head', async () => {
      const s = await make();
      const seen: StoredChunk[] = [];
      s.onAppend((e) => seen.push(e));
      await Promise.all([s.append('a', texts([{ n: 1 }, { n: 2 }])), s.append('b', texts([{ n: 3 }]))]);
      await s.complete('a');
      await until(() => seen.length >= 4);
      await new Promise((r) => setTimeout(r, 50));
      expect(seen.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
      expect(seen[3]?.kind).toBe('complete');
      expect(s.head()).toBe(4);
      await s.close();
    });
    it('stores appends made together (one turn, several queries) each in order, as served', async () => {
      const s = await make();
      await s.append('done', texts([{ n: 0 }]));
      await s.complete('done');
      const seen: StoredChunk[] = [];
      s.onAppend((e) => seen.push(e));
      const results = await Promise.all([
        s.append('x', texts([{ n: 1 }, { n: 2 }])),
        s.append('y', texts([{ error: { message: 'boom' } }])),
        s.append('empty', texts([])),
        s.append('x', texts([{ n: 3 }])),
        s.append('done', texts([{ n: 4 }])),
      ]);
      const stored = results.flat();
      expect(stored.map((e) => [e.seq, e.query, e.isError])).toEqual([
        [3, 'x', false],
        [4, 'x', false],
        [5, 'y', true],
        [6, 'x', false],
        [7, 'done', false],
      ]);
      // What each append returned is byte for byte what is served and what listeners got.
      expect((await s.page(undefined, 2, 10)).items.map((e) => e.json)).toEqual(stored.map((e) => e.json));
      await until(() => seen.length >= 5);
      expect(seen.map((e) => e.json)).toEqual(stored.map((e) => e.json));
      expect((await s.page('x', 0, 10)).items.map((e) => chunkJson(e))).toEqual([
        '{"n":1}',
        '{"n":2}',
        '{"n":3}',
      ]);
      expect(await s.state('empty')).toMatchObject({ completed: false, runAfter: 5 });
      expect(await s.state('done')).toMatchObject({ completed: false, runAfter: 6 });
      await s.close();
    });
  });
}
