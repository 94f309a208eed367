import { describe, expect, it } from 'vitest';
import { type Group, GroupAppender } from './redis-group-append.ts';

const batch = (...json: string[]) => ({
  json,
  flags: '0'.repeat(json.length),
  bytes: json.reduce((n, j) => n + j.length, 0),
});

/** A sender that hands out sequences like the script: consecutive, in call and group order. */
function recorder(fail?: (groups: Group[]) => boolean) {
  const calls: string[][] = [];
  let seq = 0;
  const send = async (groups: Group[]) => {
    calls.push(groups.map((g) => g.query));
    for (const g of groups) g.at = 1000 + calls.length;
    if (fail?.(groups)) throw new Error('redis down');
    return groups.map((g) => {
      const first = seq + 1;
      seq += g.batch.json.length;
      return first;
    });
  };
  return { calls, send };
}

describe('GroupAppender', () => {
  it('sends the appends of one event-loop turn as one call, at the end of that turn', async () => {
    const r = recorder();
    const a = new GroupAppender(r.send, { maxChunks: 1000, maxBytes: 1 << 20 });
    const first = a.append('a', batch('1', '2'));
    const second = a.append('b', batch('3'));
    expect(r.calls).toEqual([]); // nothing leaves before the turn ends
    await new Promise((resolve) => setImmediate(resolve));
    expect(r.calls).toEqual([['a', 'b']]);
    expect(await first).toEqual({ first: 1, at: 1001 });
    expect(await second).toEqual({ first: 3, at: 1001 });
    // A later turn is a call of its own.
    expect(await a.append('c', batch('4'))).toEqual({ first: 4, at: 1002 });
    expect(r.calls).toEqual([['a', 'b'], ['c']]);
  });

  it('splits a turn into calls within the chunk and byte limits, keeping queue order', async () => {
    const r = recorder();
    const a = new GroupAppender(r.send, { maxChunks: 3, maxBytes: 10 });
    const results = await Promise.all([
      a.append('a', batch('1', '2')),
      a.append('b', batch('3', '4')), // would make 4 chunks: a call of its own
      a.append('c', batch('5')),
      a.append('d', batch('0123456789')), // would make 12 bytes
    ]);
    expect(r.calls).toEqual([['a'], ['b', 'c'], ['d']]);
    expect(results.map((x) => x.first)).toEqual([1, 3, 5, 6]);
  });

  it('bounds a call by requests too: empty appends count as one chunk, at most 200 per call', async () => {
    const r = recorder();
    const a = new GroupAppender(r.send, { maxChunks: 1000, maxBytes: 1 << 20 });
    await Promise.all(Array.from({ length: 450 }, (_, i) => a.append(`e${i}`, batch())));
    expect(r.calls.map((c) => c.length)).toEqual([200, 200, 50]);
    const small = recorder();
    const c = new GroupAppender(small.send, { maxChunks: 3, maxBytes: 1 << 20 });
    await Promise.all([
      c.append('x', batch()),
      c.append('y', batch()),
      c.append('z', batch()),
      c.append('w', batch()),
    ]);
    expect(small.calls).toEqual([['x', 'y', 'z'], ['w']]);
  });

  it('fails every append of a failed call, and only those', async () => {
    const r = recorder((groups) => groups.some((g) => g.query === 'b'));
    const a = new GroupAppender(r.send, { maxChunks: 2, maxBytes: 1 << 20 });
    const results = await Promise.allSettled([
      a.append('a', batch('1', '2')),
      a.append('b', batch('3')),
      a.append('c', batch('4')),
    ]);
    expect(r.calls).toEqual([['a'], ['b', 'c']]);
    expect(results.map((x) => x.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
  });
});
