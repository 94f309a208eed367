import { describe, expect, it } from 'vitest';
import { prepareSpan } from './otlp.ts';
import { packSpans } from './span-batch.ts';
import type { TraceStore } from './types.ts';

const span = (t: string, s: string, sessionId?: string) =>
  prepareSpan({
    traceId: t.repeat(32),
    spanId: s.repeat(16),
    name: `${t}${s}`,
    ...(sessionId ? { sessionId } : {}),
  });

export function traceStoreContract(name: string, make: () => Promise<TraceStore>): void {
  describe(`TraceStore contract: ${name}`, () => {
    it('groups spans by trace, orders traces by their latest span, filters by session', async () => {
      const s = await make();
      await s.ingest(packSpans([span('a', '1', 'S'), span('b', '1')]));
      await s.ingest(packSpans([span('a', '2')]));
      const all = await s.list(undefined, 0, 10);
      expect(all.items.map((t) => [t.traceId[0], t.seq, t.spans.length])).toEqual([
        ['b', 2, 1],
        ['a', 3, 2],
      ]);
      expect(all.total).toBe(2);
      expect((await s.list(undefined, 2, 10)).items.map((t) => t.traceId[0])).toEqual(['a']);
      expect((await s.list('S', 0, 10)).items.map((t) => t.spans.length)).toEqual([2]);
      // Newest first, cursor as an exclusive upper bound; a session's traces too.
      const newest = await s.list(undefined, 0, 1, 'desc');
      expect(newest.items.map((t) => [t.traceId[0], t.seq])).toEqual([['a', 3]]);
      expect(newest.hasMore).toBe(true);
      const older = await s.list(undefined, 3, 10, 'desc');
      expect(older.items.map((t) => t.traceId[0])).toEqual(['b']);
      expect(older.hasMore).toBe(false);
      expect((await s.list('S', 0, 10, 'desc')).items.map((t) => t.traceId[0])).toEqual(['a']);
      expect((await s.list('S', 3, 10, 'desc')).items).toEqual([]);
      expect(s.inSession('a'.repeat(32), 'S')).toBe(true);
      expect((await s.spans({ sessionId: 'S' }, 0, 10)).map((x) => x.seq)).toEqual([1, 3]);
      expect(await s.trace('c'.repeat(32))).toBeUndefined();
      await s.close();
    });
    it('purges without reusing sequences', async () => {
      const s = await make();
      await s.ingest(packSpans([span('a', '1')]));
      expect(await s.purge()).toBe(1);
      expect(await s.ingest(packSpans([span('a', '2')]))).toEqual([2]);
      await s.close();
    });
  });
}
