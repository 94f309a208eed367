import { index, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Idempotency keys of the broker's purges (pkg/broker/idempotency): shared by every replica, so a
 * purge repeated on another replica is answered from here. `status` is null while the first request
 * runs (`claimed_at` says since when); then it and `body` keep the answer until `expires_at`.
 */
export const idempotencyKeys = pgTable(
  'berth_idempotency_keys',
  {
    key: text('key').primaryKey(),
    claimedAt: timestamp('claimed_at', { withTimezone: true, mode: 'string' }).notNull(),
    status: integer('status'),
    body: text('body'),
    contentType: text('content_type'),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'string' }).notNull(),
  },
  (t) => [index('berth_idempotency_keys_expires_idx').on(t.expiresAt)],
);
