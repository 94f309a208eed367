import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { errorHandler } from '../../http/index.ts';
import { createLogger } from '../../log/index.ts';
import { MemoryIdempotencyStore } from './memory-store.ts';
import { idempotent } from './middleware.ts';

function app() {
  let runs = 0;
  let fail = false;
  let gate: Promise<void> = Promise.resolve();
  const a = new Hono();
  a.onError(errorHandler(createLogger({ level: 'silent' })));
  a.use('/purge/:q', idempotent(new MemoryIdempotencyStore()));
  a.delete('/purge/:q', async (c) => {
    runs++;
    await gate;
    if (fail) return c.json({ error: 'down' }, 503);
    return c.json({ query: c.req.param('q'), deleted: runs }, 200);
  });
  return {
    a,
    runs: () => runs,
    failNext: (f: boolean) => {
      fail = f;
    },
    hold: () => {
      let open = () => {};
      gate = new Promise((r) => {
        open = r;
      });
      return open;
    },
  };
}

const del = (a: Hono, q: string, key?: string) =>
  a.request(`/purge/${q}`, { method: 'DELETE', headers: key ? { 'idempotency-key': key } : {} });

describe('idempotent()', () => {
  it('runs a keyed request once and replays its answer; other keys, paths and unkeyed requests run', async () => {
    const t = app();
    const first = await del(t.a, 'q1', 'purge-uid-1');
    expect(await first.json()).toEqual({ query: 'q1', deleted: 1 });
    const again = await del(t.a, 'q1', 'purge-uid-1');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.json()).toEqual({ query: 'q1', deleted: 1 });
    expect(t.runs()).toBe(1);
    await del(t.a, 'q2', 'purge-uid-1'); // another path: another request
    await del(t.a, 'q1', 'purge-uid-2');
    await del(t.a, 'q1');
    expect(t.runs()).toBe(4);
  });

  it('keeps no 5xx answer, refuses a repeat while the first runs, and rejects a malformed key', async () => {
    const t = app();
    t.failNext(true);
    expect((await del(t.a, 'q', 'k')).status).toBe(503);
    t.failNext(false);
    expect((await del(t.a, 'q', 'k')).status).toBe(200);
    expect(t.runs()).toBe(2);

    const open = t.hold();
    const slow = del(t.a, 'q', 'k2');
    const busy = await del(t.a, 'q', 'k2');
    expect(busy.status).toBe(409);
    expect(busy.headers.get('retry-after')).toBe('1');
    expect((await busy.json()).error.code).toBe('idempotency_key_in_use');
    open();
    expect((await slow).status).toBe(200);

    const bad = await del(t.a, 'q', 'has space');
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.code).toBe('invalid_idempotency_key');
  });
});
