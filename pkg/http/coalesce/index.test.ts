import { describe, expect, it } from 'vitest';
import { TickCoalescer } from './index.ts';

const tick = () => new Promise<void>((r) => process.nextTick(r));

describe('TickCoalescer', () => {
  it('hands on the pieces of one tick as one write, in order', async () => {
    const writes: string[] = [];
    const c = new TickCoalescer((t) => writes.push(t));
    c.push('a');
    c.push('b');
    await Promise.resolve();
    c.push('c');
    expect(writes).toEqual([]);
    expect(c.pending).toBe(true);
    await tick();
    expect(writes).toEqual(['abc']);
    expect(c.pending).toBe(false);
    c.push('d');
    await tick();
    expect(writes).toEqual(['abc', 'd']);
  });

  it('flushes at once on demand and never writes an empty piece', async () => {
    const writes: string[] = [];
    const c = new TickCoalescer((t) => writes.push(t));
    c.push('');
    c.flush();
    c.push('x');
    c.flush();
    await tick();
    expect(writes).toEqual(['x']);
  });
});
