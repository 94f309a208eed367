import { describe, expect, it } from 'vitest';
import { Limiter } from './index.ts';

describe('Limiter', () => {
  it('holds at most max at once and hands slots over in order', async () => {
    const l = new Limiter(2);
    const a = await l.acquire();
    const b = await l.acquire();
    const order: string[] = [];
    const took = (name: string) => (release: () => void) => {
      order.push(name);
      return release;
    };
    const c = l.acquire().then(took('c'));
    const d = l.acquire().then(took('d'));
    expect([l.active, l.waiting]).toEqual([2, 2]);
    a();
    a(); // a second release of the same slot is ignored
    (await c)();
    b();
    (await d)();
    expect(order).toEqual(['c', 'd']);
    expect([l.active, l.waiting]).toEqual([0, 0]);
  });

  it('ends a wait when its signal aborts, leaving the queue as it was', async () => {
    const l = new Limiter(1);
    const held = await l.acquire();
    const ctl = new AbortController();
    const waiting = l.acquire(ctl.signal);
    ctl.abort(new Error('deadline'));
    await expect(waiting).rejects.toThrow('deadline');
    expect(l.waiting).toBe(0);
    held();
    expect(l.active).toBe(0);
  });
});
