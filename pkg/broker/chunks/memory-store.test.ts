import { describe, expect, it } from 'vitest';
import { MemoryChunkStore } from './memory-store.ts';
import { splitChunk, splitUtf8 } from './split.ts';
import { chunkStoreContract } from './store.contract.ts';

chunkStoreContract(
  'memory',
  async () =>
    new MemoryChunkStore({ caps: { maxItems: 100, maxBytes: 1 << 20 }, maxStreams: 10, ttlSeconds: 60 }),
);

describe('max-chunk-size splitting', () => {
  it('splits delta content on UTF-8 boundaries and keeps finish_reason and usage on the last piece', () => {
    expect(splitUtf8('héllo', 2)).toEqual(['h', 'é', 'll', 'o']);
    const parts = splitChunk(
      {
        id: 'x',
        choices: [{ index: 0, delta: { content: 'abcdef' }, finish_reason: 'stop' }],
        usage: { total_tokens: 3 },
      },
      4,
    );
    expect(parts.map((p: any) => p.choices[0].delta.content)).toEqual(['abcd', 'ef']);
    expect(parts.map((p: any) => p.choices[0].finish_reason)).toEqual([null, 'stop']);
    expect(parts.map((p: any) => p.usage)).toEqual([undefined, { total_tokens: 3 }]);
    const small = { choices: [{ delta: { content: 'ab' } }] };
    expect(splitChunk(small, 4)[0]).toBe(small);
  });
});
