import type { ApiKeyRecord } from './format.ts';

/**
 * A key created by another key lives no longer than its parent, and works only while every key up
 * its chain is active, unexpired and still there. Checked on every verification (and listing) from
 * the informer cache, so revoking, deleting or the expiry of a parent takes its descendants with it
 * at once — the verified-key cache can never keep a child alive, since it is consulted only after
 * this check passes.
 */

/** Deeper chains than this (only a hand-edited loop makes one) are refused: fail closed. */
export const MAX_KEY_CHAIN = 32;

export type Lookup = (publicKey: string) => ApiKeyRecord | null;

const expired = (r: ApiKeyRecord, now: number) => r.expiresAtMs !== null && r.expiresAtMs <= now;

/** Whether some ancestor of `record` is revoked, expired, deleted or unreadable. */
export function ancestorInactive(record: ApiKeyRecord, lookup: Lookup, now: number): boolean {
  let current = record;
  for (let depth = 0; current.parentKey !== undefined; depth++) {
    if (depth >= MAX_KEY_CHAIN) return true;
    const parent = lookup(current.parentKey);
    if (!parent?.isActive || expired(parent, now)) return true;
    current = parent;
  }
  return false;
}

/**
 * The instant (epoch ms) a key created by `parent` must expire at the latest: the earliest expiry
 * along the parent's chain, or null when none of them expires.
 */
export function chainExpiry(parent: ApiKeyRecord, lookup: Lookup): number | null {
  let earliest: number | null = null;
  let current: ApiKeyRecord | null = parent;
  for (let depth = 0; current && depth <= MAX_KEY_CHAIN; depth++) {
    if (current.expiresAtMs !== null)
      earliest = Math.min(earliest ?? current.expiresAtMs, current.expiresAtMs);
    current = current.parentKey === undefined ? null : lookup(current.parentKey);
  }
  return earliest;
}
