import type { VersionProbe } from './version-probe.ts';

/** A page as read from PostgreSQL, with what decides how long it stays true. */
export interface Loaded<V> {
  value: V;
  /** The domain's version (version-probe.ts) in the statement that read it. */
  version: number;
  /** Database time (epoch ms) at which a row that shaped the page expires; Infinity if none. */
  validUntil: number;
  /** Rough size for the cache's byte budget. */
  bytes: number;
}

interface Entry<V> extends Omit<Loaded<V>, 'bytes'> {
  bytes: number;
}

export interface PageCacheOptions {
  /** Entries kept at most (least recently used go first). */
  maxEntries?: number;
  /** Bytes (sum of `Loaded.bytes`) kept at most. */
  maxBytes?: number;
}

export interface PageCacheStats {
  hits: number;
  misses: number;
  entries: number;
  bytes: number;
}

/**
 * Pages of a PostgreSQL store kept in memory and served again while they are still exactly what
 * the database would answer: the domain's version has not moved since the page was read (nothing
 * committed a change to its table — on any replica, a purge, a cascade, the reaper included) and
 * no row that shaped the page has expired (by the database's clock). Checking costs one shared
 * probe (version-probe.ts) instead of a query per request, so a read-mostly store serves its pages
 * from memory while a write anywhere invalidates them at once — read-after-write holds across
 * replicas with no messages between them.
 */
export class PageCache<V> {
  readonly #probe: VersionProbe;
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  readonly #entries = new Map<string, Entry<V>>();
  #bytes = 0;
  #hits = 0;
  #misses = 0;

  constructor(probe: VersionProbe, opts: PageCacheOptions = {}) {
    this.#probe = probe;
    this.#maxEntries = opts.maxEntries ?? 256;
    this.#maxBytes = opts.maxBytes ?? 16 * 1024 * 1024;
  }

  /** The cached page under `key` if it is still current, else `load()`'s (kept for next time). */
  async get(key: string, load: () => Promise<Loaded<V>>): Promise<V> {
    const e = this.#entries.get(key);
    if (e && (await this.#current(e))) {
      this.#hits++;
      // Re-insert: Map order is the LRU order.
      this.#entries.delete(key);
      this.#entries.set(key, e);
      return e.value;
    }
    this.#misses++;
    if (e) this.#drop(key, e);
    const loaded = await load();
    this.#keep(key, loaded);
    return loaded.value;
  }

  clear(): void {
    this.#entries.clear();
    this.#bytes = 0;
  }

  stats(): PageCacheStats {
    return { hits: this.#hits, misses: this.#misses, entries: this.#entries.size, bytes: this.#bytes };
  }

  async #current(e: Entry<V>): Promise<boolean> {
    try {
      const p = await this.#probe.current();
      return p.version === e.version && p.at < e.validUntil;
    } catch {
      return false; // the database is unreachable: the load says so to the caller
    }
  }

  #keep(key: string, l: Loaded<V>): void {
    if (l.bytes > this.#maxBytes / 4) return; // one huge page would evict everything else
    const old = this.#entries.get(key);
    if (old) this.#drop(key, old);
    this.#entries.set(key, {
      value: l.value,
      version: l.version,
      validUntil: l.validUntil,
      bytes: l.bytes,
    });
    this.#bytes += l.bytes;
    for (const [k, v] of this.#entries) {
      if (this.#entries.size <= this.#maxEntries && this.#bytes <= this.#maxBytes) break;
      this.#drop(k, v);
    }
  }

  #drop(key: string, e: Entry<V>): void {
    if (this.#entries.get(key) !== e) return;
    this.#entries.delete(key);
    this.#bytes -= e.bytes;
  }
}
