import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openPgMessageStore, type PgMessageStore } from '../../pkg/broker/messages/pg-store.ts';
import { openPgBackend } from '../../pkg/broker/pg/index.ts';
import { VersionProbe } from '../../pkg/broker/pg/version-probe.ts';
import { createLogger } from '../../pkg/log/index.ts';
import { eventually } from './harness.ts';
import { TestDatabases } from './pg-harness.ts';

const dbs = new TestDatabases();
afterAll(() => dbs.dropAll());
const quiet = createLogger({ level: 'silent' });

async function replica(url: string): Promise<PgMessageStore> {
  const backend = await openPgBackend({ url, logger: quiet, reapIntervalMs: 3_600_000 });
  return openPgMessageStore(backend, { defaultTtlSeconds: 3600, onClose: () => backend.close() });
}

const add = (s: PgMessageStore, c: string, n = 1, ttl_seconds?: number) =>
  s.append({
    conversation_id: c,
    query_id: 'q',
    messages: Array.from({ length: n }, (_, i) => ({ role: 'user', content: `m${i}` })),
    ...(ttl_seconds ? { ttl_seconds } : {}),
  });

const seqs = (p: { items: { seq: number }[] }) => p.items.map((m) => m.seq);

describe('PostgreSQL message pages served from memory while still current', () => {
  it('serves a repeated page from memory, and what another replica commits at once', async () => {
    const url = await dbs.fresh();
    const [a, b] = [await replica(url), await replica(url)];
    await add(b, 'c1', 5);
    const first = await a.slice({}, 0, 100);
    expect(first.total).toBe(5);
    const before = a.pageCacheStats();
    expect(await a.slice({}, 0, 100)).toEqual(first);
    expect(a.pageCacheStats().hits).toBe(before.hits + 1);

    // Read-after-write across replicas: no waiting for a notification, the next read has it.
    const written = await add(b, 'c1', 2);
    const after = await a.slice({}, 0, 100);
    expect(after.total).toBe(7);
    expect(seqs(after).slice(-2)).toEqual(written.map((m) => m.seq));
    const page = await a.page({ conversationId: 'c1' }, 0, 3);
    expect(page.hasMore).toBe(true);
    expect(await a.page({ conversationId: 'c1' }, 0, 3)).toEqual(page);

    // A purge, a conversation delete: gone from the other replica's next read.
    await b.deleteMessages({ conversationId: 'c1' });
    expect(await a.slice({}, 0, 100)).toEqual({ items: [], total: 0, hasMore: false });
    expect((await a.page({ conversationId: 'c1' }, 0, 3)).items).toEqual([]);
    await add(b, 'c2', 3);
    expect((await a.slice({}, 0, 100)).total).toBe(3);
    await b.deleteConversation('c2');
    expect((await a.slice({}, 0, 100)).total).toBe(0);
    await Promise.all([a.close(), b.close()]);
  });

  it('stops serving a page once a row that shaped it expires, with no write in between', async () => {
    const store = await replica(await dbs.fresh());
    const short = await add(store, 'c', 2, 1); // expire in a second
    const long = await add(store, 'c', 3);
    // Offset 2: the short-lived rows are before the page, yet their expiry shifts it.
    const shifted = await store.slice({}, 2, 2);
    expect(seqs(shifted)).toEqual([long[0]?.seq, long[1]?.seq]);
    const cursor = await store.page({}, 0, 10);
    expect(seqs(cursor)).toEqual([...short, ...long].map((m) => m.seq));
    await eventually(async () => seqs(await store.page({}, 0, 10)).length === 3, 5_000);
    expect(seqs(await store.page({}, 0, 10))).toEqual(long.map((m) => m.seq));
    expect(seqs(await store.slice({}, 2, 2))).toEqual([long[2]?.seq]);
    await store.close();
  });

  it('keeps at most its entry budget', async () => {
    const url = await dbs.fresh();
    const backend = await openPgBackend({ url, logger: quiet, reapIntervalMs: 3_600_000 });
    const store = await openPgMessageStore(backend, {
      defaultTtlSeconds: 3600,
      pageCache: { maxEntries: 3 },
      onClose: () => backend.close(),
    });
    await add(store, 'c', 10);
    for (let offset = 0; offset < 8; offset++) await store.slice({}, offset, 1);
    expect(store.pageCacheStats().entries).toBe(3);
    await store.slice({}, 7, 1);
    expect(store.pageCacheStats().hits).toBe(1);
    await store.slice({}, 0, 1); // evicted long ago: read again
    expect(store.pageCacheStats().hits).toBe(1);
    await store.close();
  });
});

describe('version probe', () => {
  it('answers concurrent callers one round trip at a time, and moves only when a change of the table commits', async () => {
    const url = await dbs.fresh();
    const pool = new pg.Pool({ connectionString: url, max: 4 });
    let queries = 0;
    const counting = {
      query: (...args: unknown[]) => {
        queries++;
        return (pool.query as (...a: unknown[]) => unknown)(...args);
      },
    } as unknown as pg.Pool;
    const probe = new VersionProbe(counting, 'messages_version');
    const answers = await Promise.all(Array.from({ length: 50 }, () => probe.current()));
    expect(queries).toBeLessThanOrEqual(2);
    expect(new Set(answers.map((a) => a.version))).toEqual(new Set([0]));

    const store = await replica(url);
    const v = async () => (await probe.current()).version;
    await add(store, 'c', 3);
    const v1 = await v();
    expect(v1).toBeGreaterThan(0);
    await store.slice({}, 0, 10); // reads and other tables' writes leave it
    await pool.query(`INSERT INTO berth_counters (key, shard, n) VALUES ('other', 0, 1)`);
    expect(await v()).toBe(v1);
    // An uncommitted change is not a change yet; its commit is.
    const tx = await pool.connect();
    await tx.query('BEGIN');
    await tx.query('DELETE FROM berth_messages WHERE seq = (SELECT min(seq) FROM berth_messages)');
    expect(await v()).toBe(v1);
    await tx.query('COMMIT');
    tx.release();
    const v2 = await v();
    expect(v2).toBeGreaterThan(v1);
    // A DELETE that removes nothing (the reaper, most of the time) is not a change; TRUNCATE is.
    await pool.query('DELETE FROM berth_messages WHERE seq < 0');
    expect(await v()).toBe(v2);
    await pool.query('TRUNCATE berth_messages CASCADE');
    expect(await v()).toBeGreaterThan(v2);
    await store.close();
    await pool.end();
  });
});
