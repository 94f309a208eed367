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
    expect([...splitUtf8('héllo', 2)]).toEqual(['h', 'é', 'll', 'o']);
    expect([...splitUtf8('a😀b', 4)]).toEqual(['a', '😀', 'b']);
    const parts = [
      ...splitChunk(
        {
          id: 'x',
          choices: [{ index: 0, delta: { content: 'abcdef' }, finish_reason: 'stop' }],
          usage: { total_tokens: 3 },
        },
        4,
      ),
    ];
    expect(parts.map((p: any) => p.choices[0].delta.content)).toEqual(['abcd', 'ef']);
    expect(parts.map((p: any) => p.choices[0].finish_reason)).toEqual([null, 'stop']);
    expect(parts.map((p: any) => p.usage)).toEqual([undefined, { total_tokens: 3 }]);
    const small = { choices: [{ delta: { content: 'ab' } }] };
    expect([...splitChunk(small, 4)][0]).toBe(small);
  });

  it('makes pieces one at a time: taking two of a million does not build the rest', () => {
    // Each piece copies the choice: a getter on it counts the pieces built.
    let built = 0;
    const choice = {
      index: 0,
      delta: { content: 'x'.repeat(1_000_000) },
      get logprobs() {
        built++;
        return null;
      },
    };
    const pieces = splitChunk({ choices: [choice] }, 64);
    const first = pieces.next().value as any;
    const second = pieces.next().value as any;
    expect(first.choices[0].delta.content).toBe('x'.repeat(64));
    expect(second.choices[0].finish_reason).toBeNull();
    pieces.return(undefined);
    expect(built).toBeLessThanOrEqual(3);
  });
});
