import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openPgMessageStore, type PgMessageStore } from '../../pkg/broker/messages/pg-store.ts';
import { messageStoreContract } from '../../pkg/broker/messages/store.contract.ts';
import { openPgBackend, type PgBackend } from '../../pkg/broker/pg/index.ts';
import { createLogger } from '../../pkg/log/index.ts';
import { eventually } from './harness.ts';
import { TestDatabases } from './pg-harness.ts';

const dbs = new TestDatabases();
afterAll(() => dbs.dropAll());
const quiet = createLogger({ level: 'silent' });

/** A store ("replica") with its own backend (pool, LISTEN connection, reaper) on `url`. */
async function replica(
  url: string,
  ttl = 3600,
  feed?: { pollMs: number },
): Promise<{ store: PgMessageStore; backend: PgBackend }> {
  const backend = await openPgBackend({ url, logger: quiet, reapIntervalMs: 3_600_000, feed });
  const store = await openPgMessageStore(backend, { defaultTtlSeconds: ttl, onClose: () => backend.close() });
  return { store, backend };
}

/** A store on its own fresh database: the contract expects sequences to start at 1. */
messageStoreContract('postgres', async () => (await replica(await dbs.fresh())).store);

const add = (s: PgMessageStore, c: string, q: string, n = 1, ttl_seconds?: number) =>
  s.append({
    conversation_id: c,
    query_id: q,
    messages: Array.from({ length: n }, (_, i) => ({ role: 'user', content: `${q}-${i}` })),
    ...(ttl_seconds ? { ttl_seconds } : {}),
  });

describe('PostgreSQL message store: replicas, sequences, expiry', () => {
  it('never reuses a sequence across two replicas, purges and restarts', async () => {
    const url = await dbs.fresh();
    const a = await replica(url);
    const b = await replica(url);
    const seqs: number[] = [];
    await Promise.all(
      [a, b].map(async (r, i) => {
        for (let k = 0; k < 20; k++)
          seqs.push(...(await add(r.store, `c${i}`, `q${k}`, 3)).map((m) => m.seq));
      }),
    );
    expect(new Set(seqs).size).toBe(120);
    const high = Math.max(...seqs);
    expect(await a.store.deleteMessages({})).toBe(120);
    expect(await b.store.deleteConversations()).toEqual({ conversations: 2, messages: 0 });
    await a.store.close();
    const again = await replica(url); // a restarted replica
    const [next] = await add(again.store, 'c0', 'q', 1);
    expect(next?.seq).toBe(high + 1);
    const conv = await again.store.conversation('c0');
    expect(conv?.sequence).toBe(3); // conversations have their own sequence, not reused either
    await Promise.all([again.store.close(), b.store.close()]);
  });

  it("delivers replica A's writes to B's listeners in order, without gaps, across a killed LISTEN connection", async () => {
    const url = await dbs.fresh();
    const a = await replica(url);
    const b = await replica(url);
    const seen: number[] = [];
    b.store.onAppend((m) => seen.push(m.seq));
    const written: number[] = [];
    const write = async (n: number) => {
      for (let i = 0; i < n; i++)
        written.push(...(await add(a.store, 'x', `w${i}`, 1 + (i % 3))).map((m) => m.seq));
    };
    await write(10);
    await eventually(() => seen.length === written.length);
    const listenPid = b.backend.notifier.backendPid;
    expect(listenPid).toBeGreaterThan(0);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query('SELECT pg_terminate_backend($1)', [listenPid]);
    await write(15); // while B reconnects: no NOTIFY reaches it, the catch-up read must
    await eventually(() => b.backend.notifier.connected && b.backend.notifier.backendPid !== listenPid);
    await write(5);
    await eventually(() => seen.length === written.length, 10_000);
    expect(seen).toEqual(written);
    expect(b.store.head()).toBe(written.at(-1));
    // A burned sequence value (a rolled-back insert) is skipped, not waited on forever.
    await admin.query(`SELECT nextval('berth_messages_seq')`);
    await admin.end();
    await write(2);
    await eventually(() => seen.length === written.length);
    expect(seen).toEqual(written);
    await Promise.all([a.store.close(), b.store.close()]);
  });

  it("announces each batch in its own statement: B's listeners get A's writes with B's polling off", async () => {
    const url = await dbs.fresh();
    const a = await replica(url);
    const b = await replica(url, 3600, { pollMs: 3_600_000 });
    const seen: number[] = [];
    b.store.onAppend((m) => seen.push(m.seq));
    const written: number[] = [];
    await Promise.all(
      Array.from({ length: 30 }, async (_, i) =>
        written.push(...(await add(a.store, `n${i % 3}`, `q${i}`, 2)).map((m) => m.seq)),
      ),
    );
    // Only a NOTIFY can wake B within this time: its next poll is an hour away.
    await eventually(() => seen.length === written.length, 3000);
    expect(seen).toEqual([...written].sort((x, y) => x - y));
    await Promise.all([a.store.close(), b.store.close()]);
  });

  it('keeps order with concurrent writers on both replicas (commits out of sequence order)', async () => {
    const url = await dbs.fresh();
    const [a, b] = [await replica(url), await replica(url)];
    const seenA: number[] = [];
    const seenB: number[] = [];
    a.store.onAppend((m) => seenA.push(m.seq));
    b.store.onAppend((m) => seenB.push(m.seq));
    const writers = [a, b, a, b].map(async (r, w) => {
      for (let i = 0; i < 25; i++) await add(r.store, `conv-${w}`, `q${i}`, 2);
    });
    await Promise.all(writers);
    await eventually(() => seenA.length === 200 && seenB.length === 200, 10_000);
    const all = (await a.store.page({}, 0, 1000)).items.map((m) => m.seq);
    expect(seenA).toEqual(all);
    expect(seenB).toEqual(all);
    await Promise.all([a.store.close(), b.store.close()]);
  });

  it('writes concurrent appends of many conversations as batches: each gets its own rows, each new conversation once', async () => {
    const { store } = await replica(await dbs.fresh());
    const announced: string[] = [];
    store.onConversation((c) => announced.push(c.conversation_id));
    // 60 appends at once: they land in a few group-committed batches mixing conversations, empty
    // appends (which only create their conversation) and per-append TTLs.
    const appends = Array.from({ length: 60 }, (_, i) => ({
      c: `conv-${i % 7}`,
      q: `q-${i}`,
      n: i % 5,
      ttl: i % 3 === 0 ? 120 : undefined,
    }));
    const results = await Promise.all(appends.map((a) => add(store, a.c, a.q, a.n, a.ttl)));
    for (const [i, rows] of results.entries()) {
      const a = appends[i] as (typeof appends)[number];
      expect(rows.map((m) => JSON.parse(m.json).message.content)).toEqual(
        Array.from({ length: a.n }, (_, k) => `${a.q}-${k}`),
      );
      expect(rows.every((m) => m.conversationId === a.c && m.queryId === a.q)).toBe(true);
      for (const [k, m] of rows.entries()) if (k) expect(m.seq).toBe((rows[k - 1] as typeof m).seq + 1);
      if (a.ttl) for (const m of rows) expect(m.expiresAt - Date.now()).toBeLessThan(121_000);
    }
    await eventually(() => announced.length === 7, 5_000);
    expect(announced.sort()).toEqual(Array.from({ length: 7 }, (_, i) => `conv-${i}`));
    const status = await store.status();
    expect(status.total_messages).toBe(appends.reduce((s, a) => s + a.n, 0));
    expect(status.total_conversations).toBe(7);
    for (let i = 0; i < 7; i++)
      expect(status.conversations[`conv-${i}`]?.message_count).toBe(
        appends.filter((a) => a.c === `conv-${i}`).reduce((s, a) => s + a.n, 0),
      );
    await store.close();
  });

  it('appends to a conversation deleted while the append runs: recreated, never a foreign-key 500', async () => {
    const url = await dbs.fresh();
    const { store } = await replica(url);
    await add(store, 'c-del', 'q0');
    // Another replica's DELETE holds the conversation's row while the append starts: the append
    // sees the row, then its message insert waits on that row's lock and finds it gone.
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query("DELETE FROM berth_conversations WHERE id = 'c-del'");
      const appended = add(store, 'c-del', 'q1', 2);
      await eventually(async () => {
        const waiting = await other.query(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
        );
        return waiting.rows[0].n > 0;
      });
      await other.query('COMMIT');
      expect((await appended).map((m) => [m.conversationId, m.queryId])).toEqual([
        ['c-del', 'q1'],
        ['c-del', 'q1'],
      ]);
      // The conversation exists again, holding only what came after the delete.
      expect(await store.conversation('c-del')).toMatchObject({ message_count: 2, query_count: 1 });
    } finally {
      await other.end();
      await store.close();
    }
  });

  it('hides expired messages at once, reaps them in batches, and keeps counts right', async () => {
    const url = await dbs.fresh();
    const r = await replica(url);
    await add(r.store, 'e', 'short', 3, 1);
    await add(r.store, 'e', 'long', 2);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    // Expire without sleeping: move the short-lived rows into the past.
    await admin.query(
      `UPDATE berth_messages SET expires_at = now() - interval '1 second' WHERE query_id = 'short'`,
    );
    const page = await r.store.page({ conversationId: 'e' }, 0, 10);
    expect(page.items.map((m) => JSON.parse(m.json).query_id)).toEqual(['long', 'long']);
    expect(await r.backend.reaper.runOnce()).toEqual({ messages: 3 });
    expect((await admin.query('SELECT count(*)::int AS n FROM berth_messages')).rows[0].n).toBe(2);
    expect(await r.store.conversation('e')).toMatchObject({ message_count: 2, query_count: 1 });
    expect((await r.store.page({}, 0, 10)).total).toBe(2);
    expect((await r.store.slice({ queryId: 'long' }, 1, 10)).total).toBe(2);
    await admin.end();
    await r.store.close();
  });

  it('pages and counts in SQL on indexed columns (no sequential scan of messages)', async () => {
    const url = await dbs.fresh();
    const r = await replica(url);
    for (let i = 0; i < 20; i++) await add(r.store, `c${i % 4}`, `q${i % 5}`, 50);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query('ANALYZE');
    await admin.query('SET enable_seqscan = off'); // a plan that needs a seq scan shows it anyway
    for (const where of ["conversation_id = 'c1'", "query_id = 'q2'", 'true']) {
      const plan = await admin.query(
        `EXPLAIN SELECT seq FROM berth_messages WHERE ${where} AND seq > 10 AND expires_at > now() ORDER BY seq LIMIT 101`,
      );
      expect(plan.rows.map((x) => x['QUERY PLAN']).join('\n')).not.toMatch(/Seq Scan on berth_messages/);
    }
    await admin.end();
    const p = await r.store.page({ conversationId: 'c1', queryId: 'q1' }, 0, 7);
    expect(p.items).toHaveLength(7);
    expect(p.total).toBe(50);
    expect((await r.store.page({ queryId: 'q2' }, 0, 1)).total).toBe(200);
    expect((await r.store.status()).total_messages).toBe(1000);
    await r.store.close();
  });

  it('writes batches on the writer connection with one generic plan (reads keep custom plans), after a reconnect too', async () => {
    const url = await dbs.fresh();
    const r = await replica(url);
    const { pool, writer } = r.backend.database;
    const planCounts = async () =>
      (
        await writer.run((c) =>
          c.query<{ generic: string; custom: string }>(
            `SELECT generic_plans AS generic, custom_plans AS custom FROM pg_prepared_statements
              WHERE name = 'berth_append_batch'`,
          ),
        )
      ).rows[0];
    const writerPid = async () =>
      (await writer.run((c) => c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))).rows[0]?.pid;
    for (let i = 0; i < 8; i++) await add(r.store, 'g', `q${i}`, 1 + (i % 3));
    // Without the setting PostgreSQL plans this statement anew for each of its first executions
    // (custom plans) and keeps doing so while the custom plans look cheaper.
    expect(await planCounts()).toEqual({ generic: '8', custom: '0' });
    expect((await pool.query('SHOW plan_cache_mode')).rows[0]).toEqual({ plan_cache_mode: 'auto' });
    // The writer's connection killed while idle: the next write opens a new one, set up the same way.
    const pid = await writerPid();
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    await eventually(
      async () => (await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])).rowCount === 0,
    );
    await admin.end();
    await eventually(async () => {
      try {
        await add(r.store, 'g', 'after', 1);
        return true;
      } catch {
        return false; // the killed connection may fail the first write (503); nothing was stored by it
      }
    });
    const again = await writerPid();
    expect(again).not.toBe(pid);
    expect(await planCounts()).toEqual({ generic: '1', custom: '0' });
    expect((await r.store.page({ conversationId: 'g' }, 0, 100)).total).toBe(16);
    await r.store.close();
  });
});
