import { sql } from 'drizzle-orm';
import { bigint, boolean, index, integer, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

/**
 * Sessions, one row each. `seq` is bumped from the sessions sequence on every change, so "changes
 * after a cursor" is an index range scan; `expires_at` slides forward on every event or message
 * (SESSIONS_VISIBILITY_TTL_SECONDS) and hides the session, it does not delete it.
 * `json` is the wire view (SessionView, sequence included) built once per change; the roll-up is
 * revived from it (the query list and conversations are always read whole). The other columns are
 * what filters and sorts look at: `name_key` is the name lower-cased by JS (sorted COLLATE "C", the
 * memory store's order), `search` the lower-cased haystack of the `search` filter, `latest_query`
 * the query whose outcome decides the status.
 */
export const sessions = pgTable(
  'berth_sessions',
  {
    sessionId: text('session_id').primaryKey(),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    status: text('status').notNull().default('idle'),
    nameKey: text('name_key').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'string' }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'string' }).notNull().defaultNow(),
    firstActivity: timestamp('first_activity', { withTimezone: true, mode: 'string' }).notNull(),
    lastActivity: timestamp('last_activity', { withTimezone: true, mode: 'string' }).notNull(),
    conversationCount: integer('conversation_count').notNull().default(0),
    latestQuery: text('latest_query'),
    search: text('search').notNull(),
    json: text('json').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'string' }).notNull(),
    // Set by the reaper once expires_at passed (and cleared by new activity): the per-status
    // counters (berth_counters 'sessions:<status>') count rows with hidden = false, so the
    // unfiltered list's total and statusCounts need no count over the table.
    hidden: boolean('hidden').notNull().default(false),
  },
  (t) => [
    uniqueIndex('berth_sessions_seq_idx').on(t.seq),
    // The three sorts of the list (sort=date|name|conversations), each with seq as tie-breaker,
    // so a sorted page is an index scan too (name in code-point order, like the memory store).
    index('berth_sessions_last_activity_idx').on(t.lastActivity, t.seq),
    index('berth_sessions_name_idx').on(sql`${t.nameKey} COLLATE "C"`, t.seq),
    index('berth_sessions_conversations_idx').on(t.conversationCount, t.seq),
    // Only rows not yet marked hidden: the ones expiring soon, the reaper's and the counters' concern.
    index('berth_sessions_expires_idx').on(t.expiresAt).where(sql`NOT hidden`),
    index('berth_sessions_status_idx').on(t.status, t.seq),
  ],
);

/**
 * Which session a query belongs to, learned from its events: messages carry only a query id.
 * Rows untouched for longer than the sessions TTL are reaped (no message of that query can
 * still be attributed meaningfully after it).
 */
export const sessionQueries = pgTable(
  'berth_session_queries',
  {
    queryId: text('query_id').primaryKey(),
    sessionId: text('session_id').notNull(),
    touchedAt: timestamp('touched_at', { withTimezone: true, mode: 'string' }).notNull().default(sql`now()`),
  },
  (t) => [index('berth_session_queries_touched_idx').on(t.touchedAt)],
);
