import { CHANNELS } from '../pg/index.ts';
import { COLUMNS, WRITER_SHARD } from './pg-sql.ts';

/**
 * SQL of a group-committed batch of POST /messages: the whole batch in one statement (or two inside
 * a roll-up's transaction), whatever its size. Arrays carry the batch; see pg-sql.ts for the
 * contention rules all follow (no row every append updates; counters sharded by connection).
 */

/**
 * CTEs `ensured` (the conversations this statement created: id, seq, created_at): creates the
 * batch's missing conversations (`$ids` in first-appearance order, `$ats` the time of the append
 * that names each first) drawing their sequences in that order, and moves `last_activity` of
 * existing ones when it is more than a second old. A concurrent creation of the same id waits in
 * ON CONFLICT and inserts nothing.
 */
const ensureCtes = (ids: string, ats: string) => `
  conv_in AS (SELECT id, at, ord FROM unnest(${ids}::text[], ${ats}::timestamptz[]) WITH ORDINALITY AS c(id, at, ord)),
  touch AS (
    UPDATE berth_conversations b SET last_activity = c.at FROM conv_in c
    WHERE b.id = c.id AND b.last_activity < c.at - interval '1 second'),
  ensured AS (
    INSERT INTO berth_conversations (id, seq, created_at, last_activity)
    SELECT id, nextval('berth_conversations_seq'), at, at
    FROM (SELECT id, at FROM conv_in c WHERE NOT EXISTS (SELECT 1 FROM berth_conversations b WHERE b.id = c.id)
          ORDER BY ord) n
    ON CONFLICT (id) DO NOTHING
    RETURNING id, seq, created_at),
  conv_count AS (
    INSERT INTO berth_counters AS k (key, shard, n)
    SELECT 'conversations', ${WRITER_SHARD}, count(*) FROM ensured HAVING count(*) > 0
    ON CONFLICT (key, shard) DO UPDATE SET n = k.n + EXCLUDED.n)`;

/**
 * CTEs `ins` (the inserted rows, COLUMNS): every message of the batch, one element per message of
 * `$p` conversation, `$p+1` query, `$p+2` receive time, `$p+3` ttl seconds and `$p+4` the record
 * without its leading `{` (the stored JSON is `{"sequence":N,` + that, built once in Node).
 * Sequences are drawn here and matched to the input in order, so input order is sequence order.
 * Counts per (conversation, query) and the global counter move once per batch.
 */
const insertCtes = (p: number) => `
  r AS (
    SELECT * FROM unnest($${p}::text[], $${p + 1}::text[], $${p + 2}::timestamptz[], $${p + 3}::float8[], $${p + 4}::text[])
      WITH ORDINALITY AS r(conversation_id, query_id, at, ttl, body, ord)),
  s AS (SELECT nextval('berth_messages_seq') AS seq FROM generate_series(1, cardinality($${p + 4}::text[]))),
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
    SELECT 'messages', ${WRITER_SHARD}, cardinality($${p + 4}::text[]) WHERE cardinality($${p + 4}::text[]) > 0
    ON CONFLICT (key, shard) DO UPDATE SET n = k.n + EXCLUDED.n)`;

/** Each created conversation, announced on the conversations channel. */
const CREATED = `SELECT id, seq::float8 AS seq, created_at, pg_notify('${CHANNELS.conversations}', seq::text) AS _n FROM ensured`;

/** The conversations step alone (`$1` ids, `$2` times), inside a roll-up's transaction. */
export const ENSURE_CONVERSATIONS = `WITH ${ensureCtes('$1', '$2')} ${CREATED} ORDER BY seq`;

/**
 * Tells the other replicas that messages up to the batch's highest sequence are committed: a
 * NOTIFY inside the batch, delivered at its commit. It costs no statement or round trip of its own:
 * a separate NOTIFY after each batch woke another PostgreSQL backend, and the broker spent 6–7 % of
 * its samples in that socket write alone (a fresh broker at c=50: +6–18 % without it). PostgreSQL
 * serializes the commits of notifying transactions, but a replica writes one batch at a time, and a
 * batch that creates a conversation notified inside it already; two replicas measured no slower.
 */
const ANNOUNCED = `SELECT pg_notify('${CHANNELS.messages}', max(seq)::text) AS _n FROM ins`;

/** The messages step alone (`$1`..`$5`), inside a roll-up's transaction, after ENSURE_CONVERSATIONS. */
export const INSERT_MESSAGES = `WITH ${insertCtes(1)}, announced AS (${ANNOUNCED})
  SELECT ins.* FROM ins CROSS JOIN announced ORDER BY ins.seq`;

/**
 * The whole batch in one statement, committed on its own (no roll-up to share a transaction with):
 * one round trip instead of BEGIN, two statements and COMMIT. The messages' foreign key to a
 * conversation this statement creates holds: the check runs at the end of the statement and sees
 * its rows. Rows: the created conversations first (`kind` 'c': id in `conversation_id`, `seq`,
 * `created_at` as ISO text in `json`), then the messages (`kind` 'm') in sequence order. The batch
 * announces itself (ANNOUNCED).
 */
export const APPEND_BATCH = `WITH ${ensureCtes('$1', '$2')}, ${insertCtes(3)},
  created AS (${CREATED}),
  announced AS (${ANNOUNCED})
  SELECT x.* FROM (
    SELECT 'c' AS kind, seq::bigint AS seq, to_json(created_at) #>> '{}' AS json, id AS conversation_id,
           '' AS query_id, 0::float8 AS exp FROM created
    UNION ALL
    SELECT 'm', seq, json, conversation_id, query_id, exp FROM ins) x CROSS JOIN announced
  ORDER BY kind, seq`;
