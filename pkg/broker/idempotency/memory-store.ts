import type { Begun, IdempotencyOptions, IdempotencyStore, StoredResponse } from './types.ts';
import { idempotencyOptions } from './types.ts';

interface Entry {
  response?: StoredResponse;
  /** Claim time while running; finish time once done. */
  at: number;
}

/** Keys in this process's memory, at most `maxKeys` (the oldest go first). */
export class MemoryIdempotencyStore implements IdempotencyStore {
  readonly #keys = new Map<string, Entry>();
  readonly #o: IdempotencyOptions;
  readonly #max: number;
  readonly #now: () => number;

  constructor(opts: Partial<IdempotencyOptions> & { maxKeys?: number; now?: () => number } = {}) {
    this.#o = idempotencyOptions(opts);
    this.#max = opts.maxKeys ?? 100_000;
    this.#now = opts.now ?? Date.now;
  }

  async begin(key: string): Promise<Begun> {
    const now = this.#now();
    const e = this.#keys.get(key);
    if (e?.response && now - e.at < this.#o.ttlMs) return { state: 'done', response: e.response };
    if (e && !e.response && now - e.at < this.#o.claimMs) return { state: 'busy' };
    this.#keys.delete(key);
    this.#keys.set(key, { at: now });
    for (const k of this.#keys.keys()) {
      if (this.#keys.size <= this.#max) break;
      this.#keys.delete(k);
    }
    return { state: 'new' };
  }

  async finish(key: string, response: StoredResponse): Promise<void> {
    this.#keys.set(key, { response, at: this.#now() });
  }

  async abandon(key: string): Promise<void> {
    if (!this.#keys.get(key)?.response) this.#keys.delete(key);
  }
}
