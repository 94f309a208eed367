import { describe, expect, it } from 'vitest';
import { MemoryTraceStore } from './memory-store.ts';
import { flattenRequest, normalizeId, prepareSpan } from './otlp.ts';
import { packSpans } from './span-batch.ts';
import { traceStoreContract } from './store.contract.ts';
import type { AppendedSpan } from './types.ts';

traceStoreContract(
  'memory',
  async () => new MemoryTraceStore({ caps: { maxItems: 100, maxBytes: 1 << 20 }, ttlSeconds: 60 }),
);

describe('OTLP normalisation', () => {
  it('lower-cases hex ids, accepts base64 ids, rejects zero or malformed ids', () => {
    expect(normalizeId('ABCDEF0123456789', 8)).toBe('abcdef0123456789');
    expect(normalizeId(Buffer.from('0102030405060708', 'hex').toString('base64'), 8)).toBe(
      '0102030405060708',
    );
    expect(normalizeId('0000000000000000', 8)).toBeUndefined();
    expect(normalizeId('xyz', 8)).toBeUndefined();
  });
  it('takes the session from the span or its resource', () => {
    const attr = (v: string) => [{ key: 'svc.session.id', value: { stringValue: v } }];
    const flat = flattenRequest({
      resourceSpans: [
        {
          resource: { attributes: attr('from-resource') },
          scopeSpans: [
            {
              spans: [
                { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), name: 'x', attributes: attr('own') },
                { traceId: 'a'.repeat(32), spanId: 'c'.repeat(16), name: 'y' },
              ],
            },
          ],
        },
      ],
    });
    expect(flat.spans.map((s) => s.sessionId)).toEqual(['own', 'from-resource']);
  });
});

describe('MemoryTraceStore slabs', () => {
  const prepared = (i: number, trace: string) =>
    prepareSpan({ traceId: trace.repeat(32), spanId: `${i}`.padStart(16, '1'), name: `span ${i} é 漢` });

  it('serves views that keep their JSON after eviction, and reuses the slabs of evicted spans', async () => {
    const s = new MemoryTraceStore({ caps: { maxItems: 50, maxBytes: 1 << 30 }, ttlSeconds: 60 });
    await s.ingest(packSpans([prepared(1, 'a')]));
    const [first] = await s.spans({}, 0, 1);
    const before = first?.json;
    for (let i = 2; i <= 5000; i++) await s.ingest(packSpans([prepared(i, i % 2 ? 'b' : 'c')]));
    expect(first?.json).toBe(before);
    expect(JSON.parse(before ?? '{}')).toMatchObject({ sequence: 1, name: 'span 1 é 漢' });
    const spans = await s.spans({}, 0, 100);
    expect(spans.map((x) => JSON.parse(x.json).name)).toEqual(
      Array.from({ length: 50 }, (_, k) => `span ${4951 + k} é 漢`),
    );
    // 5,000 spans went through; the 50 kept fit in one slab, with at most the spares beside it.
    expect(s.stats().slabBytes).toBeLessThanOrEqual(6 * 256 * 1024);
    const trace = await s.trace('b'.repeat(32));
    expect(trace?.every((x) => JSON.parse(x.json).traceId === 'b'.repeat(32))).toBe(true);
    expect(await s.purge()).toBe(50);
    expect(s.stats().items).toBe(0);
  });

  it('tells its listeners of every span of a batch, even one the cap evicted in the same batch', async () => {
    const s = new MemoryTraceStore({ caps: { maxItems: 2, maxBytes: 1 << 30 }, ttlSeconds: 60 });
    const seen: AppendedSpan[] = [];
    s.onAppend((e) => seen.push(e));
    const seqs = await s.ingest(packSpans([1, 2, 3, 4, 5].map((i) => prepared(i, 'a'))));
    expect(seqs).toEqual([1, 2, 3, 4, 5]);
    expect(seen.map((e) => [e.seq, e.traceId, JSON.parse(e.json()).name])).toEqual(
      [1, 2, 3, 4, 5].map((i) => [i, 'a'.repeat(32), `span ${i} é 漢`]),
    );
    expect((await s.spans({}, 0, 10)).map((e) => JSON.parse(e.json).sequence)).toEqual([4, 5]);
  });
});
