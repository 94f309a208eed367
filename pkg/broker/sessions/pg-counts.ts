import { COUNTER_SHARDS, type Queryable } from '../pg/index.ts';
import type { SessionStatus } from './types.ts';

/*
 * Sessions are never deleted by their TTL, so a busy cluster's table keeps growing; the unfiltered
 * list (the dashboard's first page and its tab counters) must not count it row by row. Counters in
 * berth_counters ('sessions:<status>', sharded) count the rows with hidden = false: every roll-up
 * moves its session's entry in the same transaction (pg-rollup.ts), the reaper marks expired rows
 * hidden and takes them off, a purge takes off what it deletes. Rows expired but not marked yet
 * (at most one reaper interval's worth) are subtracted through the partial index on expires_at.
 */

const STATUSES: SessionStatus[] = ['active', 'idle', 'error'];
const counterAdd = (from: string) => `INSERT INTO berth_counters (key, shard, n)
  SELECT 'sessions:' || status, floor(random() * ${COUNTER_SHARDS})::int2, -count(*) FROM ${from} GROUP BY status
  ON CONFLICT (key, shard) DO UPDATE SET n = berth_counters.n + EXCLUDED.n`;

/** Visible sessions per status, from the counters (no scan over the sessions). */
export async function statusTotals(q: Queryable): Promise<Record<SessionStatus, number>> {
  const r = await q.query(
    `SELECT s.status, (coalesce(c.n, 0) - coalesce(x.n, 0))::int8 AS n
       FROM unnest($1::text[]) AS s(status)
       LEFT JOIN (SELECT substr(key, 10) AS status, sum(n) AS n FROM berth_counters
                   WHERE key = ANY($2::text[]) GROUP BY key) c USING (status)
       LEFT JOIN (SELECT status, count(*) AS n FROM berth_sessions
                   WHERE NOT hidden AND expires_at <= now() GROUP BY status) x USING (status)`,
    [STATUSES, STATUSES.map((s) => `sessions:${s}`)],
  );
  const out: Record<SessionStatus, number> = { active: 0, idle: 0, error: 0 };
  for (const row of r.rows) out[row.status as SessionStatus] = Math.max(0, Number(row.n));
  return out;
}

/** The highest sequence of a visible session (of one status): a backward scan of a seq index. */
export async function visibleWatermark(q: Queryable, status: SessionStatus | undefined): Promise<number> {
  const r = await q.query(
    `SELECT coalesce(max(seq), 0)::int8 AS s FROM berth_sessions
      WHERE expires_at > now() ${status ? 'AND status = $1' : ''}`,
    status ? [status] : [],
  );
  return Number(r.rows[0]?.s);
}

/** One reaper batch: marks expired sessions hidden (they stay, invisible) and uncounts them. */
export async function hideExpired(q: Queryable, limit: number): Promise<number> {
  const r = await q.query(
    `WITH h AS (
       UPDATE berth_sessions SET hidden = true
        WHERE session_id IN (SELECT session_id FROM berth_sessions WHERE NOT hidden AND expires_at <= now()
                              ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)
          AND NOT hidden AND expires_at <= now()
       RETURNING status),
     c AS (${counterAdd('h')})
     SELECT count(*)::int8 AS n FROM h`,
    [limit],
  );
  return Number(r.rows[0]?.n);
}

/** Deletes every session, uncounting the visible ones in the same statement. */
export async function deleteAllSessions(q: Queryable): Promise<number> {
  const r = await q.query(
    `WITH d AS (DELETE FROM berth_sessions RETURNING status, hidden),
          c AS (${counterAdd('d WHERE NOT hidden')})
     SELECT count(*)::int8 AS n FROM d`,
  );
  return Number(r.rows[0]?.n);
}
