import type { Queryable } from '../pg/index.ts';
import type { Session } from './rollup.ts';

/**
 * Stand-in sessions in PostgreSQL: a query's messages written before any of its events named its
 * session are rolled up under the query's id. When an event first maps that query to a session, the
 * stand-in is absorbed into it and its row deleted — what the memory store does (memory-store.ts,
 * `#earlyMessages`), so both backends answer the same.
 */

/** A session as loaded for a change (see pg-rollup.ts `loadSessions`). */
interface LoadedLike {
  session: Session;
  counted: string | undefined;
}

/**
 * Records the events' query → session mappings and returns the queries mapped for the first time
 * to a session other than their own id: their stand-ins (if any) are to be absorbed. One statement:
 * the CTE reads the mappings as they were before its insert.
 */
export async function recordMappings(q: Queryable, map: Map<string, string>): Promise<Set<string>> {
  if (!map.size) return new Set();
  const r = await q.query(
    `WITH before AS (SELECT query_id FROM berth_session_queries WHERE query_id = ANY($1::text[])),
          mapped AS (
            INSERT INTO berth_session_queries (query_id, session_id)
            SELECT * FROM unnest($1::text[], $2::text[])
            ON CONFLICT (query_id) DO UPDATE SET session_id = EXCLUDED.session_id, touched_at = now())
     SELECT query_id FROM before`,
    [[...map.keys()], [...map.values()]],
  );
  const known = new Set(r.rows.map((row) => row.query_id as string));
  return new Set(
    [...map].filter(([query, session]) => query !== session && !known.has(query)).map(([query]) => query),
  );
}

/**
 * Moves a loaded stand-in for `queryId` into `target` when it is one (see `Session.isStandInFor`)
 * and is not itself being changed by this batch; returns whether it did (the caller drops its row).
 */
export function absorbStandIn(
  loaded: Map<string, LoadedLike>,
  queryId: string,
  target: Session,
  changed: Set<string>,
): boolean {
  const standIn = loaded.get(queryId)?.session;
  if (!standIn?.isStandInFor(queryId) || changed.has(queryId) || target.id === queryId) return false;
  target.absorb(standIn);
  loaded.delete(queryId);
  return true;
}

/** Deletes absorbed stand-ins and takes them out of the status counters they were counted in. */
export async function dropStandIns(
  q: Queryable,
  ids: string[],
  before: Map<string, string | undefined>,
): Promise<Map<string, number>> {
  const delta = new Map<string, number>();
  if (!ids.length) return delta;
  await q.query('DELETE FROM berth_sessions WHERE session_id = ANY($1::text[])', [ids]);
  for (const id of ids) {
    const status = before.get(id);
    if (status !== undefined) delta.set(status, (delta.get(status) ?? 0) - 1);
  }
  return delta;
}

/**
 * The mappings of `queries` as committed now. A message batch reads mappings before it takes its
 * session locks; an event mapping one of its queries may commit in between (that event's
 * transaction holds the stand-in's lock, which this batch then waits for). Read again once the
 * locks are held, those messages follow the query to its session, as they would have a moment later.
 */
export async function currentMappings(q: Queryable, queries: string[]): Promise<Map<string, string>> {
  if (!queries.length) return new Map();
  const r = await q.query(
    'SELECT query_id, session_id FROM berth_session_queries WHERE query_id = ANY($1::text[])',
    [queries],
  );
  return new Map(r.rows.map((row) => [row.query_id as string, row.session_id as string]));
}
