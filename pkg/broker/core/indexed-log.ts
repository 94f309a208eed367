import { CappedLog, type Caps, type Entry, KeyIndex } from './capped-log.ts';
import type { Journal } from './journal.ts';
import { maybeCompact, seqLine } from './persist.ts';
import { type Page, pageAfter, type SeqDeque } from './seq-deque.ts';

export interface TimedEntry extends Entry {
  expiresAt: number;
}

export interface IndexedLogOptions<E extends TimedEntry, K extends string> {
  caps: Caps;
  /** Secondary indexes: name → the entry's key ('' = not indexed, unless `indexEmpty`). */
  keys: Record<K, (e: E) => string>;
  /** Indexes '' like any key, for a store whose filters may ask for an empty id. */
  indexEmpty?: boolean;
  journal?: Journal | undefined;
  /** Rebuilds an entry from a persisted record (the parsed object and its JSON). */
  revive: (record: Record<string, unknown>, json: string, expiresAt: number) => E;
  /** Extra journal operations of the owning store (`$op` other than del/clear). */
  onOp?: (op: Record<string, unknown>) => void;
  /**
   * Sees each journal line first and returns true when it handled it: for a store whose journal
   * shapes predate this engine (the messages store's `del` has no `k`, and it keeps a `$convSeq`).
   */
  ownLine?: (line: Record<string, unknown>) => boolean;
  onEvict?: (e: E) => void;
  /** Entries deleted or expired (evictions go to `onEvict`; a clear reports none, it drops all). */
  onRemove?: (gone: E[]) => void;
  now?: () => number;
}

/**
 * A capped, optionally persisted log with per-key indexes and expiry: the shared engine of the
 * message, event, chunk and span stores. Sequences are kept in a watermark so they are never reused.
 */
export class IndexedLog<E extends TimedEntry, K extends string> {
  readonly log: CappedLog<E>;
  readonly #idx = new Map<K, KeyIndex<E>>();
  readonly #opts: IndexedLogOptions<E, K>;
  readonly #now: () => number;
  seq = 0;
  #nextExpiry = Number.POSITIVE_INFINITY;

  constructor(opts: IndexedLogOptions<E, K>) {
    this.#opts = opts;
    this.#now = opts.now ?? Date.now;
    for (const k of Object.keys(opts.keys) as K[]) this.#idx.set(k, new KeyIndex<E>());
    this.log = new CappedLog<E>(opts.caps, (e) => {
      this.#forKeys(e, (idx, key) => idx.evict(key, e));
      opts.onEvict?.(e);
    });
  }

  now(): number {
    return this.#now();
  }

  async load(): Promise<void> {
    await this.#opts.journal?.load((v) => {
      if (this.#opts.ownLine?.(v)) return;
      if (typeof v.$seq === 'number') this.seq = Math.max(this.seq, v.$seq);
      else if (v.$op === 'del') this.#remove(v.k as K, String(v.v));
      else if (v.$op === 'clear') this.dropAll();
      else if (typeof v.$op === 'string') this.#opts.onOp?.(v);
      else if (v.r && typeof v.r === 'object') {
        const r = v.r as Record<string, unknown>;
        const e = this.#opts.revive(r, JSON.stringify(r), Number(v.x));
        this.seq = Math.max(this.seq, e.seq);
        this.#add(e);
      }
    });
  }

  nextSeq(): number {
    return ++this.seq;
  }

  append(e: E): void {
    this.#add(e);
    this.#opts.journal?.append(`{"x":${e.expiresAt},"r":${e.json}}`);
  }

  /** Journals a store-specific operation (replayed through `onOp` at load). */
  journalOp(op: Record<string, unknown>): void {
    this.#opts.journal?.append(JSON.stringify(op));
  }

  index(name: K, key: string): SeqDeque<E> | undefined {
    return this.#idx.get(name)?.get(key);
  }

  indexSize(name: K): number {
    return this.#idx.get(name)?.size ?? 0;
  }

  page(by: [K, string] | undefined, cursor: number, limit: number): Page<E> {
    const d = by ? this.index(by[0], by[1]) : this.log.entries;
    if (!d) return { items: [], total: 0, hasMore: false };
    return { ...pageAfter(d, cursor, limit), total: d.length };
  }

  /** Deletes every entry whose `name` key is `value`; returns how many. */
  remove(name: K, value: string): number {
    const n = this.#remove(name, value);
    this.journalOp({ $op: 'del', k: name, v: value });
    return n;
  }

  clear(): number {
    const n = this.dropAll();
    this.journalOp({ $op: 'clear' });
    this.#opts.journal?.append(seqLine(this.seq));
    return n;
  }

  /** Deletes without journaling, for a store that journals deletions in its own shape. */
  dropWhere(pred: (e: E) => boolean): number {
    const gone = this.log.removeWhere(pred);
    if (gone.length) {
      const set = new Set(gone);
      for (const [name, idx] of this.#idx) {
        const keys = new Set(gone.map((e) => this.#opts.keys[name](e)));
        for (const k of keys) idx.removeFrom(k, (x) => set.has(x));
      }
      this.#opts.onRemove?.(gone);
    }
    return gone.length;
  }

  /** Clears without journaling (see `dropWhere`). */
  dropAll(): number {
    for (const idx of this.#idx.values()) idx.clear();
    return this.log.clear();
  }

  sweep(extraSnapshot: () => Iterable<string> = () => []): void {
    const now = this.#now();
    if (now >= this.#nextExpiry) {
      this.#nextExpiry = Number.POSITIVE_INFINITY;
      this.dropWhere((e) => e.expiresAt <= now);
      for (const e of this.log.entries.values()) this.#nextExpiry = Math.min(this.#nextExpiry, e.expiresAt);
    }
    this.#opts.journal?.flush();
    maybeCompact(this.#opts.journal, this.log.bytes, () => this.#snapshot(extraSnapshot));
  }

  close(): void {
    this.#opts.journal?.append(seqLine(this.seq));
    this.#opts.journal?.close();
  }

  *#snapshot(extra: () => Iterable<string>): Iterable<string> {
    yield seqLine(this.seq);
    yield* extra();
    for (const e of this.log.entries.values()) yield `{"x":${e.expiresAt},"r":${e.json}}`;
  }

  #add(e: E): void {
    this.#forKeys(e, (idx, key) => idx.add(key, e));
    if (e.expiresAt < this.#nextExpiry) this.#nextExpiry = e.expiresAt;
    this.log.append(e);
  }

  #remove(name: K, value: string): number {
    const key = this.#opts.keys[name];
    return this.dropWhere((e) => key(e) === value);
  }

  #forKeys(e: E, fn: (idx: KeyIndex<E>, key: string) => void): void {
    for (const [name, idx] of this.#idx) {
      const key = this.#opts.keys[name](e);
      if (key || this.#opts.indexEmpty) fn(idx, key);
    }
  }
}
