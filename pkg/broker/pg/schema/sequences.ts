import { bigint, pgSequence, pgTable, primaryKey, smallint, text } from 'drizzle-orm/pg-core';

/**
 * One PostgreSQL SEQUENCE per domain. A sequence is shared by every replica, survives restarts and
 * never hands a value out twice (not after a purge, not after a rollback) — unlike max()+1. CACHE 1
 * (the default) keeps values in draw order across connections, which the feed readers rely on.
 */
export const messagesSeq = pgSequence('berth_messages_seq', { startWith: 1 });
export const conversationsSeq = pgSequence('berth_conversations_seq', { startWith: 1 });
export const eventsSeq = pgSequence('berth_events_seq', { startWith: 1 });
export const sessionsSeq = pgSequence('berth_sessions_seq', { startWith: 1 });

/** Sequence names by domain (the feed readers and stores name them in raw SQL). */
export const SEQUENCES = {
  messages: 'berth_messages_seq',
  conversations: 'berth_conversations_seq',
  events: 'berth_events_seq',
  sessions: 'berth_sessions_seq',
} as const;

/**
 * Sharded counters maintained on write, so a list's `total` is a sum of a few rows instead of a
 * count over the table. Each connection adds to its own shard (`pg_backend_pid() % 16`): one hot
 * row would serialize every writer on its lock until commit.
 */
export const counters = pgTable(
  'berth_counters',
  {
    key: text('key').notNull(),
    shard: smallint('shard').notNull(),
    n: bigint('n', { mode: 'number' }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.key, t.shard] })],
);

export const COUNTER_SHARDS = 16;
