import type pg from 'pg';
import { versionSql } from '../pg/version-probe.ts';
import type { ConversationInfo, MessageFilter, StoredMessage } from './types.ts';

/**
 * SQL of the PostgreSQL message store.
 *
 * Contention: an append locks no shared row. It creates its conversation only when missing, moves
 * the conversation's `last_activity` at most once a second, and adds to counter rows of its own
 * connection's shard (`pg_backend_pid() % 16`) — one row every append updated would serialize all
 * writers of a conversation until their COMMITs. Deleters and the reaper use shards 16-31, so they
 * never wait on a writer's counter rows.
 *
 * Lock order, the same everywhere (no deadlocks): the conversations table/rows (several by id),
 * then messages, then counts, then counters.
 */

/** The counter a trigger moves on every change of berth_messages (migration 0004). */
export const MESSAGES_VERSION = 'messages_version';

export const WRITER_SHARD = '(pg_backend_pid() % 16)::smallint';
const DELETER_SHARD = '(16 + pg_backend_pid() % 16)::smallint';

export interface MessageRow {
  seq: string;
  json: string;
  conversation_id: string;
  query_id: string;
  exp: number;
}

export function toStored(r: MessageRow): StoredMessage {
  return {
    seq: Number(r.seq),
    json: r.json,
    bytes: r.json.length,
    conversationId: r.conversation_id,
    queryId: r.query_id,
    expiresAt: r.exp,
  };
}

export const COLUMNS = `seq, json, conversation_id, query_id, (extract(epoch FROM expires_at) * 1000)::float8 AS exp`;

/** WHERE of a message filter; parameters start at `$from`. Expired rows are never visible. */
export function where(f: MessageFilter, from: number): { sql: string; params: string[] } {
  const parts = ['expires_at > now()'];
  const params: string[] = [];
  if (f.conversationId !== undefined)
    parts.push(`conversation_id = $${from + params.push(f.conversationId) - 1}`);
  if (f.queryId !== undefined) parts.push(`query_id = $${from + params.push(f.queryId) - 1}`);
  return { sql: parts.join(' AND '), params };
}

/**
 * `total` of a filter from counters kept on write, never a count over messages: the sharded global
 * counter, or the sharded (conversation, query) counts.
 */
export function totalSql(f: MessageFilter, from: number): { sql: string; params: string[] } {
  if (f.conversationId === undefined && f.queryId === undefined)
    return { sql: `SELECT coalesce(sum(n), 0) FROM berth_counters WHERE key = 'messages'`, params: [] };
  const w = where(f, from);
  return {
    sql: `SELECT coalesce(sum(n), 0) FROM berth_message_counts WHERE ${w.sql.replace('expires_at > now() AND ', '')}`,
    params: w.params,
  };
}

/**
 * One page (cursor or offset) and the filter's total in one round trip, with what the page cache
 * needs (page-cache.ts): the messages version (`ver`) the statement saw and, in offset mode, when the first of
 * the rows up to the page's end expires (`until`, epoch ms) — one of those expiring shifts the page.
 * In cursor mode the rows returned (the page and one more) are the ones that shape it.
 */
export function pageSql(f: MessageFilter, mode: 'cursor' | 'offset'): { sql: string; params: string[] } {
  const w = where(f, 3);
  const t = totalSql(f, 3 + w.params.length);
  const head = `WITH t AS (SELECT (${t.sql}) AS total, ${versionSql(MESSAGES_VERSION)} AS ver),`;
  const tail = 'FROM t LEFT JOIN p ON true ORDER BY p.seq';
  if (mode === 'cursor')
    return {
      sql: `${head}
      p AS (SELECT ${COLUMNS} FROM berth_messages WHERE ${w.sql} AND seq > $1 ORDER BY seq LIMIT $2)
      SELECT t.total::float8 AS total, t.ver, NULL::float8 AS until, p.* ${tail}`,
      params: [...w.params, ...t.params],
    };
  return {
    sql: `${head}
      k AS (SELECT seq, expires_at FROM berth_messages WHERE ${w.sql} ORDER BY seq LIMIT $1::bigint + $2::bigint),
      v AS (SELECT (extract(epoch FROM min(expires_at)) * 1000)::float8 AS until FROM k),
      p AS (SELECT ${COLUMNS} FROM berth_messages
            WHERE seq IN (SELECT seq FROM k ORDER BY seq OFFSET $1::bigint))
      SELECT t.total::float8 AS total, t.ver, v.until, p.* FROM t CROSS JOIN v LEFT JOIN p ON true ORDER BY p.seq`,
    params: [...w.params, ...t.params],
  };
}

export const FEED_READ = `SELECT ${COLUMNS} FROM berth_messages WHERE seq > $1 AND expires_at > now() ORDER BY seq LIMIT $2`;
export const FEED_START = `SELECT coalesce(max(seq), 0)::float8 AS seq FROM berth_messages`;

/**
 * Deletes messages chosen by `victims` (a WHERE on berth_messages) and takes them out of the counts
 * in the same statement. The caller has locked the affected conversations already.
 */
export function deleteSql(victims: string): string {
  return `
  WITH d AS (DELETE FROM berth_messages WHERE ${victims} RETURNING conversation_id, query_id),
  g AS (SELECT conversation_id, query_id, count(*) AS n FROM d GROUP BY 1, 2),
  mc AS (INSERT INTO berth_message_counts AS m (conversation_id, query_id, shard, n)
         SELECT conversation_id, query_id, ${DELETER_SHARD}, -n FROM g
         ON CONFLICT (conversation_id, query_id, shard) DO UPDATE SET n = m.n + EXCLUDED.n),
  t AS (INSERT INTO berth_counters AS k (key, shard, n)
        SELECT 'messages', ${DELETER_SHARD}, -coalesce(sum(n), 0) FROM g
        ON CONFLICT (key, shard) DO UPDATE SET n = k.n + EXCLUDED.n)
  SELECT coalesce(sum(n), 0)::float8 AS deleted FROM g`;
}

/** Locks the conversations a filtered delete touches, in id order (the lock order). */
export function lockConversationsSql(f: MessageFilter): { sql: string; params: string[] } {
  if (f.conversationId !== undefined)
    return { sql: 'SELECT id FROM berth_conversations WHERE id = $1 FOR UPDATE', params: [f.conversationId] };
  return {
    sql: `SELECT id FROM berth_conversations WHERE id IN
            (SELECT conversation_id FROM berth_message_counts WHERE query_id = $1)
          ORDER BY id FOR UPDATE`,
    params: [f.queryId ?? ''],
  };
}

/** Deletes one conversation (the FK cascades to its messages and counts) and adjusts the counters. */
export const DELETE_CONVERSATION = `
  WITH n AS (SELECT coalesce(sum(n), 0) AS m FROM berth_message_counts WHERE conversation_id = $1),
  d AS (DELETE FROM berth_conversations WHERE id = $1 RETURNING id),
  t AS (INSERT INTO berth_counters AS k (key, shard, n)
        SELECT 'messages', ${DELETER_SHARD}, -(SELECT m FROM n) FROM d
        UNION ALL SELECT 'conversations', ${DELETER_SHARD}, -1 FROM d
        ON CONFLICT (key, shard) DO UPDATE SET n = k.n + EXCLUDED.n)
  SELECT (SELECT m FROM n)::float8 AS n FROM d`;

export interface ConversationRow {
  id: string;
  seq: number;
  created_at: Date;
  last_activity: Date;
  message_count: number;
  query_count: number;
}

export const CONVERSATION_COLUMNS = `id, seq::float8 AS seq, created_at, last_activity,
  coalesce((SELECT sum(n) FROM berth_message_counts m WHERE m.conversation_id = c.id), 0)::float8 AS message_count,
  (SELECT count(*) FROM (SELECT 1 FROM berth_message_counts m WHERE m.conversation_id = c.id
     GROUP BY query_id HAVING sum(n) > 0) q)::float8 AS query_count`;

export function toInfo(r: ConversationRow): ConversationInfo {
  return {
    conversation_id: r.id,
    sequence: r.seq,
    created_at: r.created_at.toISOString(),
    last_activity: r.last_activity.toISOString(),
    message_count: r.message_count,
    query_count: r.query_count,
  };
}

/** Creates an empty conversation unless it exists; counts and announces it. */
export const CREATE_CONVERSATION = `
  WITH ins AS (
    INSERT INTO berth_conversations (id, seq, created_at, last_activity)
    SELECT $1, nextval('berth_conversations_seq'), $2, $2
    WHERE NOT EXISTS (SELECT 1 FROM berth_conversations WHERE id = $1)
    ON CONFLICT (id) DO NOTHING
    RETURNING id, seq, created_at, last_activity),
  t AS (INSERT INTO berth_counters AS k (key, shard, n) SELECT 'conversations', ${WRITER_SHARD}, count(*) FROM ins
        ON CONFLICT (key, shard) DO UPDATE SET n = k.n + EXCLUDED.n)
  SELECT id, seq::float8 AS seq, created_at, last_activity, 0::float8 AS message_count, 0::float8 AS query_count,
    pg_notify('berth_conversations', seq::text) FROM ins`;

/**
 * One reaper batch (in the reaper's transaction, which holds the messages reap lock). Lock order
 * as everywhere: the conversations table, then the victims' conversation rows by id, then the rows.
 */
export async function reapBatch(client: pg.PoolClient, limit: number): Promise<number> {
  await client.query('LOCK TABLE berth_conversations IN ROW SHARE MODE');
  const v = await client.query<{ seq: string; conversation_id: string }>(
    'SELECT seq, conversation_id FROM berth_messages WHERE expires_at <= now() ORDER BY expires_at LIMIT $1',
    [limit],
  );
  if (!v.rows.length) return 0;
  const convs = [...new Set(v.rows.map((r) => r.conversation_id))];
  await client.query('SELECT id FROM berth_conversations WHERE id = ANY($1) ORDER BY id FOR UPDATE', [convs]);
  const seqs = v.rows.map((r) => r.seq);
  const r = await client.query(deleteSql('seq = ANY($1::bigint[]) AND expires_at <= now()'), [seqs]);
  return r.rows[0]?.deleted ?? 0;
}
