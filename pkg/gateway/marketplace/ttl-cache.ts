/**
 * A bounded map whose entries expire: what the items aggregator keeps successful fetches in. A
 * Map keeps insertion order, so the oldest entry is the first key — evicted when full.
 */
export class TtlCache<V> {
  readonly #entries = new Map<string, { value: V; expires: number }>();
  readonly #ttlMs: number;
  readonly #max: number;
  readonly #now: () => number;

  constructor(o: { ttlMs: number; max: number; now?: () => number }) {
    this.#ttlMs = o.ttlMs;
    this.#max = o.max;
    this.#now = o.now ?? Date.now;
  }

  get(key: string): V | undefined {
    const e = this.#entries.get(key);
    if (!e) return undefined;
    if (e.expires <= this.#now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  set(key: string, value: V): void {
    this.#entries.delete(key);
    while (this.#entries.size >= this.#max) {
      const oldest = this.#entries.keys().next();
      if (oldest.done) break;
      this.#entries.delete(oldest.value);
    }
    this.#entries.set(key, { value, expires: this.#now() + this.#ttlMs });
  }

  get size(): number {
    return this.#entries.size;
  }
}
