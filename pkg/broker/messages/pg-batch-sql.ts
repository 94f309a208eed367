import { COLUMNS, WRITER_SHARD } from './pg-sql.ts';

/**
 * SQL of a group-committed batch of POST /messages: two statements for the whole batch, whatever
 * its size, instead of two per append. Arrays carry the batch; see pg-sql.ts for the contention
 * rules both follow (no row every append updates; counters sharded by connection).
 */

/**
 * Creates the batch's missing conversations (`$1` ids in first-appearance order, `$2` the time of
 * the append that names each first) drawing their sequences in that order, and moves
 * `last_activity` of existing ones when it is more than a second old. Returns the conversations
 * this statement created, each announced on the conversations channel. A concurrent creation of
 * the same id waits in ON CONFLICT and inserts nothing.
 */
export const ENSURE_CONVERSATIONS = `
  WITH c AS (SELECT id, at, ord FROM unnest($1::text[], $2::timestamptz[]) WITH ORDINALITY AS c(id, at, ord)),
  touch AS (
    UPDATE berth_conversations b SET last_activity = c.at FROM c
    WHERE b.id = c.id AND b.last_activity < c.at - interval '1 second'),
  ins AS (
    INSERT INTO berth_conversations (id, seq, created_at, last_activity)
    SELECT id, nextval('berth_conversations_seq'), at, at
    FROM (SELECT id, at FROM c WHERE NOT EXISTS (SELECT 1 FROM berth_conversations b WHERE b.id = c.id)
          ORDER BY ord) n
    ON CONFLICT (id) DO NOTHING
    RETURNING id, seq, created_at),
  t AS (
    INSERT INTO berth_counters AS k (key, shard, n)
    SELECT 'conversations', ${WRITER_SHARD}, count(*) FROM ins HAVING count(*) > 0
    ON CONFLICT (key, shard) DO UPDATE SET n = k.n + EXCLUDED.n)
  SELECT id, seq::float8 AS seq, created_at, pg_notify('berth_conversations', seq::text) AS _n
  FROM ins ORDER BY seq`;

/**
 * Inserts every message of the batch, one element per message of `$1` conversation, `$2` query,
 * `$3` receive time, `$4` ttl seconds and `$5` the record without its leading `{` (the stored JSON
 * is `{"sequence":N,` + that, built once here). Sequences are drawn in this statement and matched
 * to the input in order, so input order is sequence order. Counts per (conversation, query) and
 * the global counter move once per batch.
 */
export const INSERT_MESSAGES = `
  WITH r AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::float8[], $5::text[])
      WITH ORDINALITY AS r(conversation_id, query_id, at, ttl, body, ord)),
  s AS (SELECT nextval('berth_messages_seq') AS seq FROM generate_series(1, cardinality($5::text[]))),
  o AS (SELECT seq, row_number() OVER (ORDER BY seq) AS ord FROM s),
  ins AS (
    INSERT INTO berth_messages (seq, conversation_id, query_id, created_at, expires_at, json)
    SELECT o.seq, r.conversation_id, r.query_id, r.at, now() + make_interval(secs => r.ttl),
           '{"sequence":' || o.seq || ',' || r.body
    FROM o JOIN r USING (ord)
    RETURNING ${COLUMNS}),
  g AS (SELECT conversation_id, query_id, count(*) AS n FROM r GROUP BY 1, 2),
  mc AS (
    INSERT INTO berth_message_counts AS m (conversation_id, query_id, shard, n)
    SELECT conversation_id, query_id, ${WRITER_SHARD}, n FROM g ORDER BY 1, 2
    ON CONFLICT (conversation_id, query_id, shard) DO UPDATE SET n = m.n + EXCLUDED.n),
  t AS (
    INSERT INTO berth_counters AS k (key, shard, n)
    VALUES ('messages', ${WRITER_SHARD}, cardinality($5::text[]))
    ON CONFLICT (key, shard) DO UPDATE SET n = k.n + EXCLUDED.n)
  SELECT ins.* FROM ins ORDER BY ins.seq`;
