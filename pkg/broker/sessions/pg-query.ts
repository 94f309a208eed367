import type { Queryable } from '../pg/index.ts';
import { statusTotals, visibleWatermark } from './pg-counts.ts';
import type { SessionFilter, SessionListOptions, SessionPage, SessionStatus, SessionView } from './types.ts';

/** A WHERE clause under construction: conditions joined by AND, values numbered as they are added. */
class Where {
  readonly parts: string[] = [];
  readonly values: unknown[] = [];
  add(sql: (p: string) => string, value: unknown): void {
    this.values.push(value);
    this.parts.push(sql(`$${this.values.length}`));
  }
  get sql(): string {
    return this.parts.length ? `WHERE ${this.parts.join(' AND ')}` : '';
  }
}

/**
 * The filters of a session list as SQL on the row's columns. Hidden sessions (visibility TTL
 * passed) never match. `search` runs on the lower-cased haystack column the roll-up writes.
 */
export function sessionWhere(f: SessionFilter, cursor: number, withStatus: boolean): Where {
  const w = new Where();
  w.parts.push('expires_at > now()');
  if (cursor > 0) w.add((p) => `seq > ${p}`, cursor);
  if (f.session_id !== undefined) w.add((p) => `session_id = ${p}`, f.session_id);
  if (withStatus && f.status !== undefined) w.add((p) => `status = ${p}`, f.status);
  if (f.dateFrom !== undefined)
    w.add((p) => `last_activity >= ${p}::timestamptz`, new Date(Date.parse(f.dateFrom)).toISOString());
  if (f.dateTo !== undefined)
    w.add((p) => `first_activity <= ${p}::timestamptz`, new Date(Date.parse(f.dateTo)).toISOString());
  if (f.search) w.add((p) => `strpos(search, ${p}) > 0`, f.search.toLowerCase());
  return w;
}

const SORT_COLUMN = {
  date: 'last_activity',
  name: 'name_key COLLATE "C"',
  conversations: 'conversation_count',
} as const;

/**
 * One page of sessions: the counts (see `counts`) and the items — an ordered, limited query by
 * sequence (index range) or by the sort column — run side by side.
 */
export async function listSessions(db: Queryable, o: SessionListOptions): Promise<SessionPage> {
  const f = o.filter;
  const cursor = o.cursor ?? 0;
  const w = sessionWhere(f, cursor, true);
  let order = 'seq';
  let offset = 0;
  if (f.sort) {
    const dir = (f.order ?? (f.sort === 'name' ? 'asc' : 'desc')) === 'asc' ? 'ASC' : 'DESC';
    order = `${SORT_COLUMN[f.sort]} ${dir}, seq ${dir}`;
    offset = o.offset ?? 0;
  }
  w.values.push(o.limit, offset);
  const [r, { statusCounts, total, watermark }] = await Promise.all([
    db.query(
      `SELECT json FROM berth_sessions ${w.sql} ORDER BY ${order} LIMIT $${w.values.length - 1} OFFSET $${w.values.length}`,
      w.values,
    ),
    counts(db, f, cursor),
  ]);
  const items = r.rows.map((x) => JSON.parse(x.json) as SessionView);
  const hasMore = offset + items.length < total;
  // Sequence order pages by cursor; a sorted view pages by offset and reports the change watermark.
  const nextCursor = f.sort ? watermark : (items.at(-1)?.sequence ?? cursor);
  return { items, total, hasMore, nextCursor, statusCounts };
}

/**
 * statusCounts (every filter but status), total (all filters) and the change watermark. Without
 * filters or cursor they come from the per-status counters (pg-counts.ts), not from a scan; with
 * them, from one aggregate over the matching rows (a filter or a cursor narrows what it reads).
 */
async function counts(db: Queryable, f: SessionFilter, cursor: number) {
  const statusCounts: Record<SessionStatus, number> = { active: 0, idle: 0, error: 0 };
  let total = 0;
  let watermark = cursor;
  const unfiltered =
    cursor === 0 &&
    !f.search &&
    f.session_id === undefined &&
    f.dateFrom === undefined &&
    f.dateTo === undefined;
  if (unfiltered) {
    Object.assign(statusCounts, await statusTotals(db));
    total = f.status ? statusCounts[f.status] : statusCounts.active + statusCounts.idle + statusCounts.error;
    if (f.sort) watermark = await visibleWatermark(db, f.status);
    return { statusCounts, total, watermark };
  }
  const cw = sessionWhere(f, cursor, false);
  const r = await db.query(
    `SELECT status, count(*)::int8 AS n, max(seq)::int8 AS top FROM berth_sessions ${cw.sql} GROUP BY status`,
    cw.values,
  );
  for (const row of r.rows) {
    const status = row.status as SessionStatus;
    statusCounts[status] = Number(row.n);
    if (f.status !== undefined && status !== f.status) continue;
    total += Number(row.n);
    watermark = Math.max(watermark, Number(row.top));
  }
  return { statusCounts, total, watermark };
}

/** Sessions changed after `cursor` that match `f`, in sequence order (watch replay). */
export async function sessionChanges(
  db: Queryable,
  f: SessionFilter,
  cursor: number,
  limit: number,
): Promise<SessionView[]> {
  const w = sessionWhere(f, cursor, true);
  w.values.push(limit);
  const r = await db.query(
    `SELECT json FROM berth_sessions ${w.sql} ORDER BY seq LIMIT $${w.values.length}`,
    w.values,
  );
  return r.rows.map((x) => JSON.parse(x.json) as SessionView);
}
