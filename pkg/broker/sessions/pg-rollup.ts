import type { StoredEvent } from '../events/types.ts';
import type { StoredMessage } from '../messages/types.ts';
import { COUNTER_SHARDS, type Queryable } from '../pg/index.ts';
import { Session } from './rollup.ts';
import type { SessionView } from './types.ts';

/** The columns a session row is stored as; `json` is the wire view, built once per change. */
export interface SessionRow {
  session_id: string;
  seq: number;
  json: string;
  latest_query: string | null;
  status: string;
  name_key: string;
  first_activity: string;
  last_activity: string;
  conversation_count: number;
  search: string;
}

// Two-key advisory locks live in their own key space; this class id keeps session locks apart
// from any other user of two-key advisory locks in the database.
const SESSION_LOCK_CLASS = 0x5e551;

/**
 * Rebuilds the roll-up of a stored row, so the PostgreSQL store applies events and messages with
 * the very same code as the memory store (rollup.ts) instead of a second implementation in SQL.
 */
export function reviveSession(row: { json: string; latest_query: string | null }): Session {
  const v = JSON.parse(row.json) as SessionView;
  const s = new Session(v.sessionId, v.createdAt, v.name);
  s.seq = v.sequence;
  s.firstActivity = v.firstActivity;
  s.lastActivity = v.lastActivity;
  s.lastActivityMs = Date.parse(v.lastActivity) || Date.now();
  s.status = v.status;
  s.counts = {
    queries: v.counts.queries,
    messages: v.counts.messages,
    events: v.counts.events,
    errors: v.counts.errors,
  };
  for (const q of v.queries) s.queries.set(q.queryId, { ...q });
  for (const c of v.conversations) s.conversations.add(c);
  s.latestQuery = row.latest_query ?? undefined;
  return s;
}

/** The row of a session after a change that gave it `seq`. */
export function sessionRow(s: Session, seq: number): SessionRow {
  s.seq = seq;
  s.invalidate();
  const v = s.view();
  // search: the same haystack the memory store's `matches` looks at, lower-cased once here.
  const hay = [
    v.sessionId,
    v.name,
    ...v.conversations,
    ...v.queries.flatMap((q) => [q.queryId, q.queryName ?? '']),
  ];
  return {
    session_id: s.id,
    seq,
    json: s.json(),
    latest_query: s.latestQuery ?? null,
    status: v.status,
    name_key: v.name.toLowerCase(),
    first_activity: isoOr(Date.parse(v.firstActivity)),
    last_activity: isoOr(s.lastActivityMs),
    conversation_count: v.conversations.length,
    search: hay.map((h) => h.toLowerCase()).join('\u001f'),
  };
}

/** An instant as ISO text for a timestamptz column (an unparseable one counts as now). */
function isoOr(ms: number): string {
  return new Date(Number.isFinite(ms) ? ms : Date.now()).toISOString();
}

/**
 * Locks sessions for the rest of the transaction. Locks are taken in hash order (sorted in the
 * subquery), so two writers touching the same sessions never deadlock; a lock (not FOR UPDATE)
 * also covers a session that does not exist yet, which two replicas might otherwise both create.
 */
export async function lockSessions(q: Queryable, ids: string[]): Promise<void> {
  await q.query(
    `SELECT pg_advisory_xact_lock(${SESSION_LOCK_CLASS}, h)
       FROM (SELECT DISTINCT hashtext(x) AS h FROM unnest($1::text[]) AS x ORDER BY h) AS k`,
    [ids],
  );
}

export type RollupInput =
  | { kind: 'events'; items: StoredEvent[] }
  | { kind: 'messages'; items: StoredMessage[]; at: string };

/** One change to apply: which session, and what to do to it. */
interface Step {
  sessionId: string;
  apply(s: Session): void;
  createdAt: string;
}

/** A session as loaded for a change, with what its counter entry was before it. */
export interface Loaded {
  session: Session;
  /** Counted under this status before the change (undefined: new, or hidden by its TTL). */
  counted: string | undefined;
}

/**
 * Loads sessions for a change: advisory-locked (covers sessions that do not exist yet) and FOR
 * UPDATE (a purge or the reaper's hiding waits for the change, so counters stay exact).
 */
export async function loadSessions(q: Queryable, ids: string[]): Promise<Map<string, Loaded>> {
  await lockSessions(q, ids);
  const found = await q.query(
    `SELECT session_id, json, latest_query, status, hidden FROM berth_sessions
      WHERE session_id = ANY($1::text[]) FOR UPDATE`,
    [ids],
  );
  return new Map(
    found.rows.map((r) => [
      r.session_id as string,
      { session: reviveSession(r), counted: r.hidden ? undefined : (r.status as string) },
    ]),
  );
}

/**
 * Applies events or messages to the session roll-up inside the caller's transaction: learns the
 * query → session mapping from events, resolves it for messages, gives every touched session one
 * new sequence and pushes its visibility out by `ttlSeconds`. Returns the rows written (in
 * sequence order) so the caller can notify with their sequences.
 */
export async function applyRollup(
  q: Queryable,
  input: RollupInput,
  ttlSeconds: number,
): Promise<SessionRow[]> {
  const steps = input.kind === 'events' ? await eventSteps(q, input.items) : await messageSteps(q, input);
  if (!steps.length) return [];
  const ids = [...new Set(steps.map((s) => s.sessionId))].sort();
  const loaded = await loadSessions(q, ids);
  const before = new Map([...loaded].map(([id, l]) => [id, l.counted]));
  for (const step of steps) {
    let l = loaded.get(step.sessionId);
    if (!l) {
      l = { session: new Session(step.sessionId, step.createdAt), counted: undefined };
      loaded.set(step.sessionId, l);
    }
    step.apply(l.session);
  }
  const seqs = await nextSessionSeqs(q, ids.length);
  const rows = ids.map((id, i) => sessionRow((loaded.get(id) as Loaded).session, seqs[i] as number));
  await writeSessions(q, rows, before, ttlSeconds, true);
  return rows;
}

export async function nextSessionSeqs(q: Queryable, n: number): Promise<number[]> {
  const r = await q.query(
    "SELECT nextval('berth_sessions_seq')::int8 AS seq FROM generate_series(1, $1::int)",
    [n],
  );
  return r.rows.map((x) => Number(x.seq)).sort((a, b) => a - b);
}

/**
 * Writes changed sessions and moves their counter entries (`before`: what each was counted as).
 * With `slide` (every event or message) visibility is pushed out to now + `ttlSeconds` and a hidden
 * session shows again; without it (a rename) visibility stays as it was. New sessions get the window.
 */
export async function writeSessions(
  q: Queryable,
  rows: SessionRow[],
  before: Map<string, string | undefined>,
  ttlSeconds: number,
  slide: boolean,
): Promise<void> {
  const col = <K extends keyof SessionRow>(k: K) => rows.map((r) => r[k]);
  const r = await q.query(
    `INSERT INTO berth_sessions (session_id, seq, json, latest_query, status, name_key, first_activity,
                                 last_activity, conversation_count, search, expires_at)
     SELECT *, now() + make_interval(secs => $11::float8)
       FROM unnest($1::text[], $2::int8[], $3::text[], $4::text[], $5::text[], $6::text[],
                   $7::timestamptz[], $8::timestamptz[], $9::int4[], $10::text[])
     ON CONFLICT (session_id) DO UPDATE SET
       seq = EXCLUDED.seq, json = EXCLUDED.json, latest_query = EXCLUDED.latest_query,
       status = EXCLUDED.status, name_key = EXCLUDED.name_key, first_activity = EXCLUDED.first_activity,
       last_activity = EXCLUDED.last_activity, conversation_count = EXCLUDED.conversation_count,
       search = EXCLUDED.search, updated_at = now(),
       expires_at = CASE WHEN $12::bool THEN EXCLUDED.expires_at ELSE berth_sessions.expires_at END,
       hidden = CASE WHEN $12::bool THEN false ELSE berth_sessions.hidden END
     RETURNING session_id, status, hidden`,
    [
      col('session_id'),
      col('seq'),
      col('json'),
      col('latest_query'),
      col('status'),
      col('name_key'),
      col('first_activity'),
      col('last_activity'),
      col('conversation_count'),
      col('search'),
      ttlSeconds,
      slide,
    ],
  );
  const delta = new Map<string, number>();
  const add = (status: string | undefined, n: number) => {
    if (status !== undefined) delta.set(status, (delta.get(status) ?? 0) + n);
  };
  for (const w of r.rows) {
    add(before.get(w.session_id), -1);
    add(w.hidden ? undefined : w.status, 1);
  }
  await addToStatusCounters(q, delta);
}

/** Adds per-status deltas to the sessions counters (random shards: no hot row across writers). */
export async function addToStatusCounters(q: Queryable, delta: Map<string, number>): Promise<void> {
  const keys = [...delta].filter(([, n]) => n !== 0);
  if (!keys.length) return;
  await q.query(
    `INSERT INTO berth_counters (key, shard, n)
     SELECT 'sessions:' || k, floor(random() * ${COUNTER_SHARDS})::int2, n FROM unnest($1::text[], $2::int8[]) AS x(k, n)
     ON CONFLICT (key, shard) DO UPDATE SET n = berth_counters.n + EXCLUDED.n`,
    [keys.map(([k]) => k), keys.map(([, n]) => n)],
  );
}

async function eventSteps(q: Queryable, events: StoredEvent[]): Promise<Step[]> {
  // Last mapping wins, like the memory store's map; one row per query (ON CONFLICT needs that).
  const map = new Map<string, string>();
  for (const e of events) if (e.sessionId && e.queryId) map.set(e.queryId, e.sessionId);
  if (map.size)
    await q.query(
      `INSERT INTO berth_session_queries (query_id, session_id) SELECT * FROM unnest($1::text[], $2::text[])
       ON CONFLICT (query_id) DO UPDATE SET session_id = EXCLUDED.session_id, touched_at = now()`,
      [[...map.keys()], [...map.values()]],
    );
  return events
    .filter((e) => e.sessionId)
    .map((e) => ({
      sessionId: e.sessionId,
      createdAt: e.timestamp,
      apply: (s) => s.applyEvent(e.reason, e.eventType, e.timestamp, e.data),
    }));
}

async function messageSteps(q: Queryable, input: { items: StoredMessage[]; at: string }): Promise<Step[]> {
  const queries = [...new Set(input.items.map((m) => m.queryId).filter(Boolean))];
  const known = new Map<string, string>();
  if (queries.length) {
    const r = await q.query(
      'SELECT query_id, session_id FROM berth_session_queries WHERE query_id = ANY($1::text[])',
      [queries],
    );
    for (const row of r.rows) known.set(row.query_id, row.session_id);
  }
  return input.items
    .map((m) => ({ m, id: known.get(m.queryId) ?? m.queryId }))
    .filter((x) => x.id)
    .map(({ m, id }) => ({
      sessionId: id,
      createdAt: input.at,
      apply: (s) => s.applyMessage(m.queryId, m.conversationId, input.at),
    }));
}
