import { describe, expect, it } from 'vitest';
import { type SlabText, slabText, TextSlabs } from './text-slabs.ts';

const holder = (): SlabText => ({ slab: undefined, off: 0, len: 0 });

function putAll(slabs: TextSlabs, texts: string[]): SlabText[] {
  return texts.map((t) => {
    const h = holder();
    slabs.put(t, h);
    return h;
  });
}

describe('TextSlabs', () => {
  it('keeps every text exactly, across slabs, in UTF-8 of any width', () => {
    const slabs = new TextSlabs(64);
    const texts = ['plain', 'é à ü', '漢字と絵文字 😀', 'x'.repeat(60), '', `{"a":"\\u0000"}`];
    const held = putAll(slabs, texts);
    expect(held.map((h) => slabText(h))).toEqual(texts);
    expect(held[2]?.len).toBe(Buffer.byteLength(texts[2] as string));
    // 60 bytes do not fit beside the earlier texts: a new slab was started.
    expect(held[3]?.slab).not.toBe(held[0]?.slab);
  });

  it('gives a large text a buffer of its own', () => {
    const slabs = new TextSlabs(1024);
    const [big] = putAll(slabs, ['y'.repeat(20_000)]);
    expect(big?.slab?.buf.length).toBe(20_000);
    expect(slabText(big as SlabText)).toBe('y'.repeat(20_000));
  });

  it('reuses a slab once all its texts are released, instead of allocating', () => {
    const slabs = new TextSlabs(32);
    const first = putAll(slabs, ['a'.repeat(16), 'b'.repeat(16)]);
    const firstSlab = first[0]?.slab;
    const next = putAll(slabs, ['c'.repeat(16)]);
    expect(next[0]?.slab).not.toBe(firstSlab);
    for (const h of first) slabs.release(h);
    expect(first[0]?.slab).toBeUndefined();
    expect(firstSlab?.live).toBe(0);
    const later = putAll(slabs, ['d'.repeat(16), 'e'.repeat(16)]);
    expect(later[1]?.slab).toBe(firstSlab);
    expect(slabText(later[1] as SlabText)).toBe('e'.repeat(16));
    expect(slabText(next[0] as SlabText)).toBe('c'.repeat(16));
  });

  it('counts a release once, however often it is asked', () => {
    const slabs = new TextSlabs(64);
    const [a, b] = putAll(slabs, ['abc', 'defg']);
    slabs.release(a as SlabText);
    slabs.release(a as SlabText);
    expect(b?.slab?.live).toBe(4);
  });

  it('moves the live texts out of slabs that are mostly dead, and leaves fuller ones alone', () => {
    const slabs = new TextSlabs(100);
    const texts = Array.from({ length: 30 }, (_, i) => `text-${String(i).padStart(3, '0')}`);
    const all = putAll(slabs, texts);
    // 8 bytes each, 12 per slab: keep 1 of every 4 of the first slabs (sparse), all of the last.
    const keep = (i: number) => i % 4 === 0 || i >= 24;
    all.forEach((h, i) => {
      if (!keep(i)) slabs.release(h);
    });
    const kept = all.filter((_, i) => keep(i));
    const firstSlab = kept[0]?.slab;
    expect(slabs.compact(() => kept)).toBeGreaterThan(0);
    expect(kept.map((h) => slabText(h))).toEqual(texts.filter((_, i) => keep(i)));
    expect(kept.some((h) => h.slab === firstSlab)).toBe(false);
    // Nothing left to gain: a second pass moves nothing.
    expect(slabs.compact(() => kept)).toBe(0);
  });
});
