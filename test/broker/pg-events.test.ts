import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openPgEventStore } from '../../pkg/broker/events/pg-store.ts';
import { eventStoreContract } from '../../pkg/broker/events/store.contract.ts';
import { openPgBackend } from '../../pkg/broker/pg/index.ts';
import { createLogger } from '../../pkg/log/index.ts';
import { TestDatabases } from './pg-harness.ts';

const dbs = new TestDatabases();
afterAll(() => dbs.dropAll());
const logger = createLogger({ level: 'silent' });

async function open(url: string, ttlSeconds = 3600) {
  const backend = await openPgBackend({ url, logger });
  const store = await openPgEventStore(backend, { ttlSeconds, onClose: () => backend.close() });
  return { backend, store };
}

/** A store on its own fresh database: the contract expects sequences to start at 1. */
eventStoreContract('postgres', async () => (await open(await dbs.fresh())).store);

const ev = (queryId: string, sessionId?: string, reason = 'QueryExecutionStart') => ({
  eventType: 'Normal' as const,
  reason,
  message: '',
  data: { queryId, ...(sessionId ? { sessionId } : {}) },
});

describe('PostgreSQL event store', () => {
  it('keeps events and sequences across a restart and never reuses a sequence after a purge', async () => {
    const url = await dbs.fresh();
    const a = await open(url);
    await a.store.appendMany([ev('q1', 's'), ev('q2', 's')]);
    expect(await a.store.delete()).toBe(2);
    await a.store.close();
    const b = await open(url);
    const e = await b.store.append(ev('q3', 's'));
    expect(e.seq).toBe(3);
    expect(b.store.head()).toBe(3);
    const page = await b.store.page({}, 0, 10);
    expect(page).toMatchObject({ total: 1, hasMore: false });
    expect(JSON.parse(page.items[0]?.json ?? '{}')).toMatchObject({
      sequence: 3,
      reason: 'QueryExecutionStart',
    });
    await b.store.close();
  });

  it('pages in SQL with a stable total (sharded counter) and filters by session and query', async () => {
    const { store } = await open(await dbs.fresh());
    await store.appendMany(Array.from({ length: 250 }, (_, i) => ev(`q${i % 5}`, `s${i % 2}`)));
    const first = await store.page({}, 0, 100);
    expect(first).toMatchObject({ total: 250, hasMore: true });
    expect(first.items.at(-1)?.seq).toBe(100);
    const last = await store.page({}, 200, 100);
    expect(last.items.map((e) => e.seq)).toEqual(Array.from({ length: 50 }, (_, i) => 201 + i));
    expect(last.hasMore).toBe(false);
    const s1 = await store.page({ sessionId: 's1' }, 0, 1000);
    expect(s1.total).toBe(125);
    expect(s1.items.every((e) => e.sessionId === 's1' && e.seq % 2 === 0)).toBe(true);
    expect((await store.page({ queryId: 'q3', sessionId: 's1' }, 0, 1000)).total).toBe(25);
    expect(await store.delete('q0')).toBe(50);
    expect((await store.page({}, 0, 1)).total).toBe(200);
    await store.close();
  });

  it('hides expired events at once and reaps them in batches, keeping the total right', async () => {
    const url = await dbs.fresh();
    const { backend, store } = await open(url, 1);
    await store.appendMany([ev('old'), ev('old')]);
    await new Promise((r) => setTimeout(r, 1100));
    const fresh = await open(url);
    await fresh.store.append(ev('new'));
    const page = await store.page({}, 0, 10);
    expect(page.items.map((e) => e.queryId)).toEqual(['new']);
    expect(page.total).toBe(1);
    expect((await store.page({ queryId: 'old' }, 0, 10)).total).toBe(0);
    const reaped = await backend.reaper.runOnce();
    expect(reaped.events).toBe(2);
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    const left = await c.query('SELECT count(*)::int AS n FROM berth_events');
    await c.end();
    expect(left.rows[0].n).toBe(1);
    expect((await store.page({}, 0, 10)).total).toBe(1);
    await store.close();
    await fresh.store.close();
  });

  it('gives a batch consecutive sequences while another replica appends concurrently', async () => {
    const url = await dbs.fresh();
    const a = await open(url);
    const b = await open(url);
    const singles = (async () => {
      for (let i = 0; i < 60; i++) await b.store.append(ev('single'));
    })();
    const batches: number[][] = [];
    for (let i = 0; i < 15; i++)
      batches.push(
        (await a.store.appendMany(Array.from({ length: 8 }, () => ev('batch')))).map((e) => e.seq),
      );
    await singles;
    for (const seqs of batches) expect(seqs).toEqual(seqs.map((_, i) => (seqs[0] as number) + i));
    expect((await a.store.page({}, 0, 1000)).total).toBe(180);
    await a.store.close();
    await b.store.close();
  });
});
