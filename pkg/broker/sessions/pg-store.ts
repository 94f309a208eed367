import { randomUUID } from 'node:crypto';
import type { StoredEvent } from '../events/types.ts';
import type { StoredMessage } from '../messages/types.ts';
import {
  CHANNELS,
  type Feed,
  guarded,
  inTransaction,
  LOCKS,
  type PgBackend,
  type Queryable,
} from '../pg/index.ts';
import { matchesView } from './filter.ts';
import { deleteAllSessions, hideExpired } from './pg-counts.ts';
import { listSessions, sessionChanges } from './pg-query.ts';
import { RollupQueue } from './pg-queue.ts';
import {
  applyRollup,
  loadSessions,
  nextSessionSeqs,
  type RollupInput,
  type SessionRow,
  sessionRow,
  writeSessions,
} from './pg-rollup.ts';
import { Session } from './rollup.ts';
import type { SessionFilter, SessionListOptions, SessionPage, SessionStore, SessionView } from './types.ts';

export interface PgSessionStoreOptions {
  /** SESSIONS_VISIBILITY_TTL_SECONDS: a session without activity for this long is hidden. */
  ttlSeconds: number;
  /** Runs after `close` (tests close their own backend here; stores.ts closes the shared one). */
  onClose?: () => Promise<void>;
}

interface ChangeRow {
  seq: number;
  json: string;
}

type Listener = (seq: number, view: () => SessionView, json: () => string) => void;

/**
 * Sessions in PostgreSQL. The roll-up runs on the replica that writes the event or message — inside
 * that write's transaction when the event/message store is on PostgreSQL too (`rollupInTx`), else
 * through `recordEvent`/`recordMessage` — never once per replica. Every change draws the session a
 * new sequence and notifies; each replica's feed reader hands changed sessions to `onChange`
 * listeners in sequence order, so SSE watchers on every replica see every change.
 */
export class PgSessionStore implements SessionStore {
  readonly #backend: PgBackend;
  readonly #opts: PgSessionStoreOptions;
  readonly #listeners: Listener[] = [];
  // Records whose roll-up their writer already did (see `skip`).
  readonly #skipped = new WeakSet<object>();
  readonly #queue: RollupQueue;
  #feed: Feed<ChangeRow> | undefined;

  constructor(backend: PgBackend, opts: PgSessionStoreOptions) {
    this.#backend = backend;
    this.#opts = opts;
    this.#queue = new RollupQueue(async (input) => {
      const after = await inTransaction(backend.database.pool, (c) => this.rollupInTx(c, input));
      after();
    }, backend.logger);
  }

  /** Subscribes this replica to session changes (call once, before serving). */
  async start(): Promise<void> {
    const pool = this.#backend.database.pool;
    this.#feed = await this.#backend.feed<ChangeRow>(CHANNELS.sessions, {
      name: 'sessions',
      // Hidden sessions are not pushed; their superseded sequences are gaps the feed resolves.
      read: async (after, limit) =>
        (
          await pool.query(
            'SELECT seq::int8 AS seq, json FROM berth_sessions WHERE seq > $1 AND expires_at > now() ORDER BY seq LIMIT $2',
            [after, limit],
          )
        ).rows.map((r) => ({ seq: Number(r.seq), json: r.json as string })),
      start: async () =>
        Number((await pool.query('SELECT coalesce(max(seq), 0)::int8 AS s FROM berth_sessions')).rows[0]?.s),
      deliver: (row) => this.#emit(row),
    });
    // Sessions are hidden by their TTL, never deleted; forgotten query → session links are.
    this.#backend.reaper.add({ name: 'sessions-hide', lockId: LOCKS.reapSessions, batch: hideExpired });
    this.#backend.reaper.add({
      name: 'session-queries',
      lockId: LOCKS.reapSessions,
      batch: async (client, limit) =>
        (
          await client.query(
            `DELETE FROM berth_session_queries WHERE query_id IN (
               SELECT query_id FROM berth_session_queries
                WHERE touched_at < now() - make_interval(secs => $2::float8)
                ORDER BY touched_at LIMIT $1 FOR UPDATE SKIP LOCKED)`,
            [limit, this.#opts.ttlSeconds],
          )
        ).rowCount ?? 0,
    });
  }

  head(): number {
    return this.#feed?.head() ?? 0;
  }

  /** The highest session change committed by any replica (start of a live-only watch). */
  committedHead(): Promise<number> {
    return this.#feed?.committed() ?? Promise.resolve(0);
  }

  onChange(listener: Listener): void {
    this.#listeners.push(listener);
  }

  /**
   * Marks an event or message as already rolled up by its writer. The PostgreSQL event and message
   * stores mark everything their feed delivers when they roll up in their own transaction, so a
   * `recordEvent`/`recordMessage` of it (events/open.ts, messages/open.ts) does not count it again
   * on every replica.
   */
  skip(record: object): void {
    this.#skipped.add(record);
  }

  /**
   * Rolls events or messages up inside the caller's transaction (atomic with their insert: an
   * acknowledged write always has its session change). Call the returned function after COMMIT:
   * it announces the changes to the other replicas and hands them to this replica's listeners.
   */
  async rollupInTx(client: Queryable, input: RollupInput): Promise<() => void> {
    const rows = await applyRollup(client, input, this.#opts.ttlSeconds);
    return () => this.#committed(rows);
  }

  recordEvent(e: StoredEvent): void {
    if (!this.#skipped.has(e)) this.#queue.push({ kind: 'events', items: [e] });
  }

  recordMessage(m: StoredMessage): void {
    if (!this.#skipped.has(m))
      this.#queue.push({ kind: 'messages', items: [m], at: new Date().toISOString() });
  }

  async create(input: { sessionId?: string | undefined; name?: string | undefined }) {
    await this.#queue.settled();
    const id = input.sessionId ?? randomUUID();
    const out = await guarded('postgres', () =>
      inTransaction(this.#backend.database.pool, async (client) => {
        const loaded = (await loadSessions(client, [id])).get(id);
        const existing = loaded?.session;
        if (existing && input.name === undefined)
          return { view: existing.view(), created: false, rows: [] as SessionRow[] };
        const s = existing ?? new Session(id, new Date().toISOString(), input.name);
        if (input.name !== undefined) s.name = input.name;
        const [seq] = await nextSessionSeqs(client, 1);
        const row = sessionRow(s, seq as number);
        // A rename is not activity: only a new session gets a fresh visibility window.
        const before = new Map([[id, loaded?.counted]]);
        await writeSessions(client, [row], before, this.#opts.ttlSeconds, !existing);
        return { view: s.view(), created: !existing, rows: [row] };
      }),
    );
    await this.#published(out.rows);
    return { session: out.view, created: out.created };
  }

  async get(id: string): Promise<SessionView | undefined> {
    await this.#queue.settled();
    const r = await guarded('postgres', () =>
      this.#backend.database.pool.query(
        'SELECT json FROM berth_sessions WHERE session_id = $1 AND expires_at > now()',
        [id],
      ),
    );
    return r.rows[0] ? (JSON.parse(r.rows[0].json) as SessionView) : undefined;
  }

  async list(o: SessionListOptions): Promise<SessionPage> {
    await this.#queue.settled();
    return guarded('postgres', () => listSessions(this.#backend.database.pool, o));
  }

  async changes(filter: SessionFilter, cursor: number, limit: number): Promise<SessionView[]> {
    await this.#queue.settled();
    return guarded('postgres', () => sessionChanges(this.#backend.database.pool, filter, cursor, limit));
  }

  matches(v: SessionView, filter: SessionFilter): boolean {
    return matchesView(v, filter);
  }

  /** Deletes every session (and the query → session map); sequences go on from where they were. */
  async purge(): Promise<number> {
    await this.#queue.settled();
    return guarded('postgres', () =>
      inTransaction(this.#backend.database.pool, async (client) => {
        await client.query('DELETE FROM berth_session_queries');
        return deleteAllSessions(client);
      }),
    );
  }

  /** Stops taking work; waits (bounded) for queued roll-ups. The backend closes the feed. */
  async close(): Promise<void> {
    await this.#queue.close(5000);
    await this.#opts.onClose?.();
  }

  #emit(row: ChangeRow): void {
    let view: SessionView | undefined;
    const viewOf = () => {
      view ??= JSON.parse(row.json) as SessionView;
      return view;
    };
    for (const l of this.#listeners) l(row.seq, viewOf, () => row.json);
  }

  /**
   * After a commit: tells the other replicas (a NOTIFY inside the write would serialize commits)
   * and hands the rows to this replica's feed.
   */
  #committed(rows: SessionRow[]): void {
    if (!rows.length) return;
    this.#backend.announce(CHANNELS.sessions, rows.at(-1)?.seq as number);
    this.#feed?.local(rows);
  }

  /** `#committed`, then waits until this replica's listeners saw the rows (bounded). */
  async #published(rows: SessionRow[]): Promise<void> {
    this.#committed(rows);
    if (rows.length) await this.#feed?.settle(rows.at(-1)?.seq as number);
  }
}

/** Opens the sessions store of one process on the shared PostgreSQL backend (open.ts). */
export async function openPgSessionStore(
  backend: PgBackend,
  opts: PgSessionStoreOptions,
): Promise<PgSessionStore> {
  const store = new PgSessionStore(backend, opts);
  await store.start();
  return store;
}
