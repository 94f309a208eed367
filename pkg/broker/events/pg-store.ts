import type pg from 'pg';
import type { Page } from '../core/seq-deque.ts';
import { CHANNELS, type Feed, guarded, inTransaction, LOCKS, type PgBackend } from '../pg/index.ts';
import { COUNTER_KEY, counterAdd, eventDraft, insertEvents } from './pg-insert.ts';
import type { EventFilter, EventInput, EventRollupInTx, EventStore, StoredEvent } from './types.ts';

export interface PgEventStoreOptions {
  /** EVENT_VISIBILITY_TTL_SECONDS: events older than this are hidden at once and reaped later. */
  ttlSeconds: number;
  /**
   * The sessions store when it is on PostgreSQL too: the session roll-up then happens in the
   * event's own transaction, on the writing replica only.
   */
  sessions?: EventRollupInTx | undefined;
  /** Runs after `close` (tests close their own backend here; stores.ts closes the shared one). */
  onClose?: () => Promise<void>;
}

const COLUMNS = 'seq::int8 AS seq, query_id, session_id, reason, event_type, json, expires_at';

/** An event read back from a row: the payload is parsed from its JSON only when asked for. */
class RowEvent implements StoredEvent {
  readonly seq: number;
  readonly json: string;
  readonly queryId: string;
  readonly sessionId: string;
  readonly reason: string;
  readonly eventType: string;
  readonly expiresAt: number;
  #record: { timestamp: string; data: Record<string, unknown> } | undefined;

  constructor(r: Record<string, unknown>) {
    this.seq = Number(r.seq);
    this.json = r.json as string;
    this.queryId = r.query_id as string;
    this.sessionId = r.session_id as string;
    this.reason = r.reason as string;
    this.eventType = r.event_type as string;
    this.expiresAt = new Date(r.expires_at as string | Date).getTime();
  }
  get bytes(): number {
    return this.json.length;
  }
  get timestamp(): string {
    this.#record ??= JSON.parse(this.json);
    return String(this.#record?.timestamp);
  }
  get data(): Record<string, unknown> {
    this.#record ??= JSON.parse(this.json);
    return this.#record?.data ?? {};
  }
}

/**
 * Operation events in PostgreSQL. Sequences come from the events SEQUENCE (never reused, across
 * replicas and restarts); pages and counts are index range scans; live delivery to this replica's
 * listeners (the SSE hub) goes through the feed reader, which also brings other replicas' events.
 */
export class PgEventStore implements EventStore {
  readonly #backend: PgBackend;
  readonly #opts: PgEventStoreOptions;
  readonly #listeners: Array<(e: StoredEvent) => void> = [];
  #feed: Feed<StoredEvent> | undefined;

  constructor(backend: PgBackend, opts: PgEventStoreOptions) {
    this.#backend = backend;
    this.#opts = opts;
  }

  get #pool(): pg.Pool {
    return this.#backend.database.pool;
  }

  async start(): Promise<void> {
    this.#feed = await this.#backend.feed<StoredEvent>(CHANNELS.events, {
      name: 'events',
      read: async (after, limit) =>
        (
          await this.#pool.query(`SELECT ${COLUMNS} FROM berth_events WHERE seq > $1 ORDER BY seq LIMIT $2`, [
            after,
            limit,
          ])
        ).rows.map((r) => new RowEvent(r)),
      start: async () =>
        Number(
          (await this.#pool.query('SELECT coalesce(max(seq), 0)::int8 AS s FROM berth_events')).rows[0]?.s,
        ),
      deliver: (e) => {
        // Its writer rolled it up already (in the insert's transaction).
        this.#opts.sessions?.skip(e);
        for (const l of this.#listeners) l(e);
      },
    });
    this.#backend.reaper.add({
      name: 'events',
      lockId: LOCKS.reapEvents,
      batch: async (client, limit) =>
        Number(
          (
            await client.query(
              `WITH d AS (
                 DELETE FROM berth_events WHERE seq IN (
                   SELECT seq FROM berth_events WHERE expires_at <= now()
                    ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)
                 RETURNING 1),
               c AS (${counterAdd('-(SELECT count(*) FROM d)')})
               SELECT count(*)::int8 AS n FROM d`,
              [limit],
            )
          ).rows[0]?.n,
        ),
    });
  }

  /** The last sequence this replica's listeners saw (start of a live-only watch). */
  head(): number {
    return this.#feed?.head() ?? 0;
  }

  /** The highest event sequence committed by any replica (start of a live-only watch). */
  committedHead(): Promise<number> {
    return this.#feed?.committed() ?? Promise.resolve(0);
  }

  onAppend(listener: (e: StoredEvent) => void): void {
    this.#listeners.push(listener);
  }

  append(input: EventInput): Promise<StoredEvent> {
    return this.appendMany([input]).then((all) => all[0] as StoredEvent);
  }

  /**
   * Stores events in one transaction with consecutive sequences, rolls their sessions up in the
   * same transaction (when sessions are on PostgreSQL), announces them to the other replicas after
   * the commit, and resolves once handed to this replica's listeners.
   */
  async appendMany(inputs: EventInput[]): Promise<StoredEvent[]> {
    const now = new Date().toISOString();
    const drafts = inputs.map((input) => eventDraft(input, now));
    const events = drafts.map((d) => d.event);
    const sessions = this.#opts.sessions;
    const published = await guarded('postgres', async () => {
      // Without sessions in PostgreSQL the insert is one autocommitted statement.
      if (!sessions) return void (await insertEvents(this.#pool, drafts, this.#opts.ttlSeconds));
      return inTransaction(this.#pool, async (client) => {
        // The roll-up first (it needs no event sequence), so the events' sequences are drawn by the
        // transaction's last statement and stay uncommitted for the shortest time.
        const after = await sessions.rollupInTx(client, { kind: 'events', items: events });
        await insertEvents(client, drafts, this.#opts.ttlSeconds);
        return after;
      });
    });
    published?.();
    for (const e of events) sessions?.skip(e);
    this.#backend.announce(CHANNELS.events, events.at(-1)?.seq as number);
    this.#feed?.local(events);
    await this.#feed?.settle(events.at(-1)?.seq as number);
    return events;
  }

  async page(f: EventFilter, cursor: number, limit: number): Promise<Page<StoredEvent>> {
    const where = ['expires_at > now()'];
    const values: unknown[] = [];
    if (f.queryId !== undefined) where.push(`query_id = $${values.push(f.queryId)}`);
    if (f.sessionId !== undefined) where.push(`session_id = $${values.push(f.sessionId)}`);
    const filtered = values.length > 0;
    const countSql = filtered
      ? `SELECT count(*)::int8 AS n FROM berth_events WHERE ${where.join(' AND ')}`
      : // Unfiltered, the table can be huge: the sharded counter (maintained on insert, delete and
        // reap) minus the expired rows not reaped yet (an index range on expires_at, small).
        `SELECT (SELECT coalesce(sum(n), 0) FROM berth_counters WHERE key = '${COUNTER_KEY}')
              - (SELECT count(*) FROM berth_events WHERE expires_at <= now()) AS n`;
    const pageSql = `SELECT ${COLUMNS} FROM berth_events WHERE ${where.join(' AND ')} AND seq > $${values.length + 1}
                     ORDER BY seq LIMIT $${values.length + 2}`;
    const [rows, count] = await guarded('postgres', () =>
      Promise.all([
        this.#pool.query(pageSql, [...values, cursor, limit + 1]),
        this.#pool.query(countSql, values),
      ]),
    );
    const items = rows.rows.slice(0, limit).map((r) => new RowEvent(r));
    return { items, total: Math.max(0, Number(count.rows[0]?.n)), hasMore: rows.rows.length > limit };
  }

  /** Deletes the events of one query (of one namespace), or all; the counter follows in the same statement. */
  async delete(queryId?: string, namespace?: string): Promise<number> {
    const values = queryId === undefined ? [] : namespace === undefined ? [queryId] : [queryId, namespace];
    const where = ['', 'WHERE query_id = $1', "WHERE query_id = $1 AND data->>'queryNamespace' = $2"][
      values.length
    ];
    const r = await guarded('postgres', () =>
      this.#pool.query(
        `WITH d AS (DELETE FROM berth_events ${where} RETURNING 1),
              c AS (${counterAdd('-(SELECT count(*) FROM d)')})
         SELECT count(*)::int8 AS n FROM d`,
        values,
      ),
    );
    return Number(r.rows[0]?.n);
  }

  async close(): Promise<void> {
    await this.#opts.onClose?.();
  }
}

/** Opens the events store of one process on the shared PostgreSQL backend (open.ts). */
export async function openPgEventStore(backend: PgBackend, opts: PgEventStoreOptions): Promise<PgEventStore> {
  const store = new PgEventStore(backend, opts);
  await store.start();
  return store;
}
