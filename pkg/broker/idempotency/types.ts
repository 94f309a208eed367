/** A response as it was first given, to give again for a repeated request. */
export interface StoredResponse {
  status: number;
  body: string;
  contentType: string;
}

/** What `begin` found for a key: first use, a finished request to replay, or one still running. */
export type Begun = { state: 'new' } | { state: 'done'; response: StoredResponse } | { state: 'busy' };

/**
 * Storage seam of idempotency keys (`Idempotency-Key` on the broker's purges); every backend passes
 * `store.contract.ts`. A key is claimed by `begin`, then either `finish`ed with its response (kept
 * for the key's lifetime) or `abandon`ed (a failed request may be tried again). A claim not
 * finished within `claimMs` (its process died) counts as abandoned.
 */
export interface IdempotencyStore {
  begin(key: string): Promise<Begun>;
  finish(key: string, response: StoredResponse): Promise<void>;
  abandon(key: string): Promise<void>;
}

export interface IdempotencyOptions {
  /** How long a finished key is remembered (ms). */
  ttlMs: number;
  /** How long a claim may stay unfinished before another request may take it over (ms). */
  claimMs: number;
}

/** A store's options: the defaults (keys kept a day, a claim taken over after a minute) with those given. */
export function idempotencyOptions(given: Partial<IdempotencyOptions> = {}): IdempotencyOptions {
  return { ttlMs: 24 * 3600_000, claimMs: 60_000, ...given };
}
