import {
  bigint,
  foreignKey,
  index,
  pgTable,
  primaryKey,
  smallint,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';

/**
 * Conversations: their own sequence (a watch cursor). A write touches this row only to create it
 * (and to move `last_activity`, at most once a second): a row every append updated would serialize
 * all writers of a conversation on its lock.
 */
export const conversations = pgTable(
  'berth_conversations',
  {
    id: text('id').primaryKey(),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'string' }).notNull(),
    lastActivity: timestamp('last_activity', { withTimezone: true, mode: 'string' }).notNull(),
  },
  (t) => [uniqueIndex('berth_conversations_seq_idx').on(t.seq)],
);

/**
 * Messages. `json` is the wire record (sequence first), built once at write time so lists are a
 * concatenation. Every list filter has an index ending in seq, so cursor pages are index range scans.
 */
export const messages = pgTable(
  'berth_messages',
  {
    seq: bigint('seq', { mode: 'number' }).primaryKey(),
    conversationId: text('conversation_id').notNull(),
    queryId: text('query_id').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'string' }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'string' }).notNull(),
    json: text('json').notNull(),
  },
  (t) => [
    index('berth_messages_conversation_idx').on(t.conversationId, t.seq),
    index('berth_messages_query_idx').on(t.queryId, t.seq),
    index('berth_messages_expires_idx').on(t.expiresAt),
    // Deleting a conversation deletes its messages; the FK also keeps a concurrent append from
    // leaving messages of a conversation deleted under it.
    foreignKey({ columns: [t.conversationId], foreignColumns: [conversations.id] }).onDelete('cascade'),
  ],
);

/**
 * Messages per (conversation, query), sharded: each connection adds to its own shard
 * (`pg_backend_pid() % 16`), so concurrent writers of one conversation never wait for each other;
 * a count is the sum of a few rows. Totals of filtered lists, message_count and query_count of a
 * conversation come from here.
 */
export const messageCounts = pgTable(
  'berth_message_counts',
  {
    conversationId: text('conversation_id').notNull(),
    queryId: text('query_id').notNull(),
    shard: smallint('shard').notNull().default(0),
    n: bigint('n', { mode: 'number' }).notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.conversationId, t.queryId, t.shard] }),
    index('berth_message_counts_query_idx').on(t.queryId),
    foreignKey({ columns: [t.conversationId], foreignColumns: [conversations.id] }).onDelete('cascade'),
  ],
);
