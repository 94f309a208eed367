import { COUNTER_SHARDS, LOCK_CLASS, LOCKS, type Queryable } from '../pg/index.ts';
import { type EventInput, type StoredEvent, sessionOf } from './types.ts';

export const COUNTER_KEY = 'events';

// Advisory lock (two-key form, Berth's class) that makes a batch's sequences consecutive: single
// appends hold it shared (they never wait for each other), a batch holds it exclusively while it
// draws, so no other writer's value lands inside the batch. Held to the end of the transaction.
const EVENT_SEQ_LOCK = LOCKS.eventSeq;

/** An event before its sequence is drawn: the record without `sequence`, serialized once. */
export interface EventDraft {
  event: StoredEvent;
  rest: string;
}

/** Adds `n` (an SQL expression) to a random shard of the events counter (one hot row would serialize writers). */
export function counterAdd(n: string): string {
  return `INSERT INTO berth_counters (key, shard, n)
          VALUES ('${COUNTER_KEY}', floor(random() * ${COUNTER_SHARDS})::int2, ${n})
          ON CONFLICT (key, shard) DO UPDATE SET n = berth_counters.n + EXCLUDED.n`;
}

export function eventDraft(input: EventInput, now: string): EventDraft {
  const timestamp = input.timestamp ?? now;
  const rest = JSON.stringify({
    timestamp,
    eventType: input.eventType,
    reason: input.reason,
    message: input.message,
    data: input.data,
  });
  const data = input.data as Record<string, unknown>;
  const event: StoredEvent = {
    seq: 0,
    json: '',
    bytes: 0,
    expiresAt: 0,
    queryId: typeof data.queryId === 'string' ? data.queryId : '',
    sessionId: sessionOf(data),
    reason: input.reason,
    eventType: input.eventType,
    timestamp,
    data,
  };
  return { event, rest };
}

/**
 * Draws the sequences and inserts the events in ONE statement, so a drawn value stays uncommitted
 * only as long as that statement and the commit take (the feed readers of other replicas wait on
 * such gaps). The wire JSON gets its sequence in SQL (`{"sequence":N,` + the rest), exactly as
 * JSON.stringify of the record with `sequence` first would write it; the same string is built here
 * for the returned records. The counter is updated in the same statement; the other replicas are
 * told after the commit (backend.announce: a NOTIFY inside the write would serialize commits).
 */
export async function insertEvents(q: Queryable, drafts: EventDraft[], ttlSeconds: number): Promise<void> {
  const lock = drafts.length > 1 ? 'pg_advisory_xact_lock' : 'pg_advisory_xact_lock_shared';
  const col = <T>(f: (d: EventDraft) => T) => drafts.map(f);
  const r = await q.query(
    `WITH l AS (SELECT ${lock}(${LOCK_CLASS}, ${EVENT_SEQ_LOCK}) AS held),
     x AS MATERIALIZED (
       SELECT nextval('berth_events_seq')::int8 AS s, u.*
         FROM l, unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::jsonb[],
                        $7::text[]) WITH ORDINALITY AS u(q, ss, r, t, ts, d, rest, ord)),
     i AS (
       INSERT INTO berth_events (seq, query_id, session_id, reason, event_type, timestamp, data, json, expires_at)
       SELECT s, q, ss, r, t, ts, d, '{"sequence":' || s || ',' || substr(rest, 2),
              now() + make_interval(secs => $8::float8)
         FROM x
       RETURNING expires_at),
     c AS (${counterAdd('(SELECT count(*) FROM i)')})
     SELECT array_agg(s ORDER BY ord) AS seqs, (SELECT min(expires_at) FROM i) AS exp FROM x`,
    [
      col((d) => d.event.queryId),
      col((d) => d.event.sessionId),
      col((d) => d.event.reason),
      col((d) => d.event.eventType),
      col((d) => new Date(Date.parse(d.event.timestamp)).toISOString()),
      col((d) => JSON.stringify(d.event.data)),
      col((d) => d.rest),
      ttlSeconds,
    ],
  );
  const row = r.rows[0] as { seqs: Array<string | number>; exp: Date };
  const seqs = row.seqs.map(Number);
  const expiresAt = new Date(row.exp).getTime();
  drafts.forEach((d, i) => {
    const seq = seqs[i] as number;
    d.event.seq = seq;
    d.event.json = `{"sequence":${seq},${d.rest.slice(1)}`;
    d.event.bytes = d.event.json.length;
    d.event.expiresAt = expiresAt;
  });
}
