import { type Caps, entryBytes, type StoreStats } from './capped-log.ts';
import { IndexedLog, type IndexedLogOptions, type TimedEntry } from './indexed-log.ts';
import type { Journal } from './journal.ts';

/**
 * What every in-memory store over an IndexedLog shares: journal load, the head sequence and
 * append listeners (the SSE hubs). Stores with state derived from entries rebuild it in `revived`.
 */
export abstract class LogStore<E extends TimedEntry, K extends string, V = E> {
  protected readonly log: IndexedLog<E, K>;
  /** How long an entry stays visible (the store's TTL). */
  protected readonly ttlMs: number;
  readonly #listeners: Array<(v: V) => void> = [];

  constructor(
    store: LogStoreOptions,
    opts: Pick<IndexedLogOptions<E, K>, 'keys' | 'revive' | 'onEvict' | 'onRemove' | 'onOp'>,
  ) {
    const revive = opts.revive;
    this.ttlMs = store.ttlSeconds * 1000;
    this.log = new IndexedLog({
      caps: store.caps,
      journal: store.journal,
      now: store.now,
      keys: opts.keys,
      onEvict: opts.onEvict,
      onRemove: opts.onRemove,
      onOp: opts.onOp,
      revive: (record, json, expiresAt) => {
        const e = revive(record, json, expiresAt);
        this.revived(e);
        return e;
      },
    });
  }

  /** Called for each entry rebuilt from the journal, in journal order (only during `load`). */
  protected revived(_e: E): void {}

  load(): Promise<void> {
    return this.log.load();
  }

  head(): number {
    return this.log.seq;
  }

  stats(): StoreStats {
    return { items: this.log.log.length, bytes: this.log.log.bytes, evicted: this.log.log.evicted };
  }

  onAppend(listener: (v: V) => void): void {
    this.#listeners.push(listener);
  }

  /** Tells the listeners of an append: the entry, or the view of it readers get (`V`). */
  protected emit(v: V): void {
    for (const l of this.#listeners) l(v);
  }
}

/** Options of a store with one retention time for all its entries. */
export interface LogStoreOptions {
  caps: Caps;
  ttlSeconds: number;
  journal?: Journal | undefined;
  now?: () => number;
}

/** The fields every journaled entry has, from its record and the JSON it is served as. */
export function timedEntry(r: Record<string, unknown>, json: string, expiresAt: number, overhead: number) {
  return { seq: r.sequence as number, json, bytes: entryBytes(json, overhead), expiresAt };
}
