import { bigint, index, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Operation events. `json` is the wire record (sequence first) built at write time; `data` keeps the
 * payload queryable. Filters (query, session) have indexes ending in seq for cursor pages.
 */
export const events = pgTable(
  'berth_events',
  {
    seq: bigint('seq', { mode: 'number' }).primaryKey(),
    queryId: text('query_id').notNull(),
    sessionId: text('session_id').notNull(),
    reason: text('reason').notNull(),
    eventType: text('event_type').notNull(),
    timestamp: timestamp('timestamp', { withTimezone: true, mode: 'string' }).notNull(),
    data: jsonb('data').notNull(),
    json: text('json').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'string' }).notNull(),
  },
  (t) => [
    index('berth_events_query_idx').on(t.queryId, t.seq),
    index('berth_events_session_idx').on(t.sessionId, t.seq),
    index('berth_events_expires_idx').on(t.expiresAt),
  ],
);
