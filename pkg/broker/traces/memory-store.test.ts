import { describe, expect, it } from 'vitest';
import { MemoryTraceStore } from './memory-store.ts';
import { flattenRequest, normalizeId } from './otlp.ts';
import { traceStoreContract } from './store.contract.ts';

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
