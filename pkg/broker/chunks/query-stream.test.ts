import { describe, expect, it } from 'vitest';
import type { SseSink } from '../../http/index.ts';
import { writePieces } from './query-stream.ts';
import { splitChunk } from './split.ts';

/** A sink that takes `room` frames, then is cut off (as a reader that went away). */
function sink(room: number) {
  const frames: string[] = [];
  let drains = 0;
  const s = {
    get closed() {
      return frames.length >= room;
    },
    write(frame: Uint8Array) {
      if (frames.length >= room) return false;
      frames.push(Buffer.from(frame).toString('utf8'));
      return true;
    },
    drained: async () => {
      drains++;
    },
  };
  return { s: s as unknown as SseSink, frames, drains: () => drains };
}

/** A chunk of `n` pieces of 64 bytes whose choice counts how many pieces were built. */
function counted(n: number) {
  const counter = { built: 0 };
  const choice = {
    index: 0,
    delta: { content: 'x'.repeat(64 * n) },
    get logprobs() {
      counter.built++;
      return null;
    },
  };
  return { chunk: { choices: [choice] }, counter };
}

describe('writePieces', () => {
  it('stops making pieces as soon as the reader is cut off', async () => {
    const { chunk, counter } = counted(100_000);
    const { s, frames } = sink(10);
    await writePieces(s, splitChunk(chunk, 64), 7);
    expect(frames).toHaveLength(10);
    expect(counter.built).toBeLessThanOrEqual(12);
  });

  it('waits for the socket every 64 KiB of frames, and puts the id on the last piece only', async () => {
    const { chunk } = counted(3_000);
    const { s, frames, drains } = sink(Number.POSITIVE_INFINITY);
    await writePieces(s, splitChunk(chunk, 64), 42);
    expect(frames).toHaveLength(3_000);
    expect(drains()).toBeGreaterThan(3);
    expect(frames.filter((f) => f.startsWith('id:'))).toEqual([frames.at(-1)]);
    expect(frames.at(-1)).toMatch(/^id: 42\n/);
  });
});
