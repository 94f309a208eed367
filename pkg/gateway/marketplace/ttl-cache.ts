/**
 * A map whose entries expire, bounded by the bytes its values stand for (not by their count: one
 * manifest can be 5 MiB, another 1 KiB). What the items aggregator keeps fetches in. A Map keeps
 * insertion order, so the oldest entry is the first key — evicted first when the bytes run out.
 */
export class TtlCache<V> {
  readonly #entries = new Map<string, { value: V; expires: number; bytes: number }>();
  readonly #ttlMs: number;
  readonly #maxBytes: number;
  readonly #now: () => number;
  #bytes = 0;

  constructor(o: { ttlMs: number; maxBytes: number; now?: () => number }) {
    this.#ttlMs = o.ttlMs;
    this.#maxBytes = o.maxBytes;
    this.#now = o.now ?? Date.now;
  }

  get(key: string): V | undefined {
    const e = this.#entries.get(key);
    if (!e) return undefined;
    if (e.expires <= this.#now()) {
      this.#delete(key);
      return undefined;
    }
    return e.value;
  }

  /**
   * Keeps `value` (standing for `bytes`) for `ttlMs` (default: the cache's), evicting the oldest
   * entries until it fits; a value larger than the whole cache is not kept.
   */
  set(key: string, value: V, bytes: number, ttlMs = this.#ttlMs): void {
    this.#delete(key);
    if (bytes > this.#maxBytes) return;
    for (const oldest of this.#entries.keys()) {
      if (this.#bytes + bytes <= this.#maxBytes) break;
      this.#delete(oldest);
    }
    this.#entries.set(key, { value, expires: this.#now() + ttlMs, bytes });
    this.#bytes += bytes;
  }

  #delete(key: string): void {
    const e = this.#entries.get(key);
    if (!e) return;
    this.#entries.delete(key);
    this.#bytes -= e.bytes;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The bytes the values kept stand for. */
  get bytes(): number {
    return this.#bytes;
  }
}
