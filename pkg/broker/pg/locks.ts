/**
 * Advisory lock keys (two-int form: a class id for Berth, one id per purpose), so Berth's locks
 * never collide with another application's in the same database.
 */
export const LOCK_CLASS = 0x42455254; // 'BERT'

export const LOCKS = {
  migrate: 1,
  reapMessages: 10,
  reapEvents: 11,
  reapSessions: 12,
  reapIdempotencyKeys: 13,
  /** Held while an event batch draws its sequences, so a batch's sequences are consecutive. */
  eventSeq: 20,
} as const;
