import type { StoredEvent } from '../events/types.ts';
import type { StoredMessage } from '../messages/types.ts';
import { COUNTER_SHARDS, type Queryable } from '../pg/index.ts';
import { absorbStandIn, currentMappings, dropStandIns, recordMappings } from './pg-standins.ts';
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

/**
 * One change to apply: which session, and what to do to it. `absorb`: instead, take in the stand-in
 * session of that query (pg-standins.ts). `queryId`: a message routed to its query's own id.
 */
interface Step {
  sessionId: string;
  apply(s: Session): void;
  createdAt: string;
  absorb?: string;
  queryId?: string;
}

interface Plan {
  steps: Step[];
  /** Queries whose stand-in sessions may be absorbed: they are locked and loaded too. */
  standIns: Set<string>;
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
  const { steps, standIns } =
    input.kind === 'events' ? await eventSteps(q, input.items) : await messageSteps(q, input);
  if (!steps.length) return [];
  const loaded = await loadSessions(q, [...new Set([...steps.map((s) => s.sessionId), ...standIns])]);
  if (input.kind === 'messages') await followLateMappings(q, steps, loaded);
  const ids = [...new Set(steps.map((s) => s.sessionId))].sort();
  const changed = new Set(ids);
  const before = new Map([...loaded].map(([id, l]) => [id, l.counted]));
  const dropped: string[] = [];
  for (const step of steps) {
    let l = loaded.get(step.sessionId);
    if (!l) {
      l = { session: new Session(step.sessionId, step.createdAt), counted: undefined };
      loaded.set(step.sessionId, l);
    }
    if (step.absorb === undefined) step.apply(l.session);
    else if (absorbStandIn(loaded, step.absorb, l.session, changed)) dropped.push(step.absorb);
  }
  const seqs = await nextSessionSeqs(q, ids.length);
  const rows = ids.map((id, i) => sessionRow((loaded.get(id) as Loaded).session, seqs[i] as number));
  const gone = await dropStandIns(q, dropped, before);
  await writeSessions(q, rows, before, ttlSeconds, true, gone);
  return rows;
}

/**
 * Messages routed to their query's own id whose query was mapped meanwhile follow the mapping. A
 * stand-in found under the lock proves there was none (the mapping event's transaction deletes it
 * under that lock), so only queries without one are read again: no extra statement per batch for a
 * query that has no events.
 */
async function followLateMappings(q: Queryable, steps: Step[], loaded: Map<string, Loaded>): Promise<void> {
  const own = steps.filter(
    (s) =>
      s.queryId !== undefined &&
      s.sessionId === s.queryId &&
      !loaded.get(s.queryId)?.session.isStandInFor(s.queryId),
  );
  const now = await currentMappings(q, [...new Set(own.map((s) => s.queryId as string))]);
  if (!now.size) return;
  for (const s of own) s.sessionId = now.get(s.queryId as string) ?? s.sessionId;
  const missing = [...new Set(now.values())].filter((id) => !loaded.has(id));
  // A second lock statement: only in that race, and after the stand-in's lock was released to us.
  if (missing.length) for (const [id, l] of await loadSessions(q, missing)) loaded.set(id, l);
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
  /** Counter changes of the same transaction to add with these (dropped stand-ins). */
  extra?: Map<string, number>,
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
  const delta = new Map<string, number>(extra);
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

async function eventSteps(q: Queryable, events: StoredEvent[]): Promise<Plan> {
  // Last mapping wins, like the memory store's map; one row per query (ON CONFLICT needs that).
  const map = new Map<string, string>();
  for (const e of events) if (e.sessionId && e.queryId) map.set(e.queryId, e.sessionId);
  const standIns = await recordMappings(q, map);
  const steps: Step[] = [];
  const pending = new Set(standIns);
  for (const e of events) {
    if (!e.sessionId) continue;
    // A stand-in is absorbed where the memory store does it: at its query's first event.
    if (pending.delete(e.queryId))
      steps.push({ sessionId: e.sessionId, createdAt: e.timestamp, absorb: e.queryId, apply: () => {} });
    steps.push({
      sessionId: e.sessionId,
      createdAt: e.timestamp,
      apply: (s) => s.applyEvent(e.reason, e.eventType, e.timestamp, e.data),
    });
  }
  return { steps, standIns };
}

async function messageSteps(q: Queryable, input: { items: StoredMessage[]; at: string }): Promise<Plan> {
  const queries = [...new Set(input.items.map((m) => m.queryId).filter(Boolean))];
  const known = await currentMappings(q, queries);
  const steps = input.items
    .map((m) => ({ m, id: known.get(m.queryId) ?? m.queryId }))
    .filter((x) => x.id)
    .map(({ m, id }) => ({
      sessionId: id,
      createdAt: input.at,
      queryId: known.has(m.queryId) ? undefined : m.queryId,
      apply: (s: Session) => s.applyMessage(m.queryId, m.conversationId, input.at),
    }));
  return { steps, standIns: new Set() };
}
