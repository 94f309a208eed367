import { describe, expect, it } from 'vitest';
import { pageAfter, SeqDeque, sliceAt } from './seq-deque.ts';

const item = (seq: number) => ({ seq });
const seqs = (d: SeqDeque<{ seq: number }>) => [...d.values()].map((x) => x.seq);

describe('SeqDeque', () => {
  it('keeps order through wrap-around, growth and shifts', () => {
    const d = new SeqDeque<{ seq: number }>();
    let next = 1;
    // Shift and push around the ring many times, growing it while the head is mid-array.
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < 7; i++) d.push(item(next++));
      for (let i = 0; i < 5; i++) d.shift();
    }
    const expected = Array.from({ length: 100 }, (_, i) => next - 100 + i);
    expect(seqs(d)).toEqual(expected);
    expect(d.length).toBe(100);
    expect(d.first()?.seq).toBe(expected[0]);
    expect(d.last()?.seq).toBe(next - 1);
    expect(d.at(-1)).toBeUndefined();
    expect(d.at(100)).toBeUndefined();
    expect(d.at(42)?.seq).toBe(expected[42]);
  });

  it('finds the first item after a sequence by binary search', () => {
    const d = new SeqDeque<{ seq: number }>();
    for (let i = 1; i <= 20; i++) d.push(item(i * 10));
    for (let i = 0; i < 5; i++) d.shift();
    expect(d.indexAfter(0)).toBe(0);
    expect(d.indexAfter(59)).toBe(0);
    expect(d.indexAfter(60)).toBe(1);
    expect(d.indexAfter(65)).toBe(1);
    expect(d.indexAfter(70)).toBe(2);
    expect(d.indexAfter(200)).toBe(15);
    expect(pageAfter(d, 100, 3).items.map((x) => x.seq)).toEqual([110, 120, 130]);
    expect(sliceAt(d, 14, 10).map((x) => x.seq)).toEqual([200]);
  });

  it('removes matching items and empties', () => {
    const d = new SeqDeque<{ seq: number }>();
    for (let i = 1; i <= 30; i++) d.push(item(i));
    for (let i = 0; i < 10; i++) d.shift();
    expect(d.removeWhere((x) => x.seq % 2 === 0).map((x) => x.seq)).toEqual([
      12, 14, 16, 18, 20, 22, 24, 26, 28, 30,
    ]);
    expect(seqs(d)).toEqual([11, 13, 15, 17, 19, 21, 23, 25, 27, 29]);
    expect([...d.values(8)].map((x) => x.seq)).toEqual([27, 29]);
    d.clear();
    expect(d.length).toBe(0);
    expect(d.shift()).toBeUndefined();
    expect(d.last()).toBeUndefined();
  });
});
