import { SeqDeque } from './seq-deque.ts';

/** A stored record: its sequence, its serialized JSON (built once) and an estimate of its heap cost. */
export interface Entry {
  seq: number;
  json: string;
  bytes: number;
}

/** What an in-memory store holds and has evicted to stay within its caps (for metrics). */
export interface StoreStats {
  items: number;
  /** Estimated heap bytes of the items, when the store accounts for them. */
  bytes?: number;
  /** Items dropped to respect the caps since start. */
  evicted: number;
  /** Bytes of the off-heap buffers the items' JSON is packed in, for a store that packs it. */
  slabBytes?: number;
}

export interface Caps {
  maxItems: number;
  maxBytes: number;
}

// V8 keeps ASCII/Latin-1 strings at one byte per char, anything else at two; plus the entry object,
// its slot and index references. Over- rather than under-estimated so RSS stays under the cap.
export const ENTRY_OVERHEAD = 160;
// JSON text holds no raw control characters, so "outside space..ÿ" means a two-byte string.
const WIDE = /[^ -\xff]/;

export function entryBytes(json: string, extra = 0): number {
  // UTF-8 length equal to the char count means pure ASCII: a native count, far cheaper than the
  // regex scan that only text with characters past 0x7f needs.
  const narrow = Buffer.byteLength(json) === json.length || !WIDE.test(json);
  return (narrow ? json.length : json.length * 2) + ENTRY_OVERHEAD + extra;
}

/**
 * The bounded backbone of each in-memory store: entries in sequence order, capped by count and by
 * bytes, evicting the oldest first (the callback lets the store drop them from its indexes).
 */
export class CappedLog<E extends Entry> {
  readonly entries = new SeqDeque<E>();
  readonly #caps: Caps;
  readonly #onEvict: (e: E) => void;
  #bytes = 0;
  evicted = 0;

  constructor(caps: Caps, onEvict: (e: E) => void) {
    this.#caps = caps;
    this.#onEvict = onEvict;
  }

  get bytes(): number {
    return this.#bytes;
  }

  get length(): number {
    return this.entries.length;
  }

  append(e: E): void {
    this.entries.push(e);
    this.#bytes += e.bytes;
    while (
      this.entries.length > 1 &&
      (this.entries.length > this.#caps.maxItems || this.#bytes > this.#caps.maxBytes)
    ) {
      const old = this.entries.shift() as E;
      this.#bytes -= old.bytes;
      this.evicted++;
      this.#onEvict(old);
    }
  }

  removeWhere(pred: (e: E) => boolean): E[] {
    const removed = this.entries.removeWhere(pred);
    for (const e of removed) this.#bytes -= e.bytes;
    return removed;
  }

  clear(): number {
    const n = this.entries.length;
    this.entries.clear();
    this.#bytes = 0;
    return n;
  }
}

/** Per-key secondary index (e.g. by conversation): each key's entries in sequence order. */
export class KeyIndex<E extends Entry> {
  readonly #map = new Map<string, SeqDeque<E>>();

  get(key: string): SeqDeque<E> | undefined {
    return this.#map.get(key);
  }

  get size(): number {
    return this.#map.size;
  }

  keys(): IterableIterator<string> {
    return this.#map.keys();
  }

  add(key: string, e: E): void {
    let d = this.#map.get(key);
    if (!d) {
      d = new SeqDeque<E>();
      this.#map.set(key, d);
    }
    d.push(e);
  }

  /** Drops the oldest entry of `key` if it is `e` (eviction goes oldest-first everywhere). */
  evict(key: string, e: E): void {
    const d = this.#map.get(key);
    if (!d) return;
    if (d.first() === e) d.shift();
    else d.removeWhere((x) => x === e);
    if (d.length === 0) this.#map.delete(key);
  }

  removeFrom(key: string, pred: (e: E) => boolean): void {
    const d = this.#map.get(key);
    if (!d) return;
    d.removeWhere(pred);
    if (d.length === 0) this.#map.delete(key);
  }

  delete(key: string): void {
    this.#map.delete(key);
  }

  /** Removes entries matching `pred` from every key (purges). */
  removeWhere(pred: (e: E) => boolean): void {
    for (const [k, d] of this.#map) {
      d.removeWhere(pred);
      if (d.length === 0) this.#map.delete(k);
    }
  }

  clear(): void {
    this.#map.clear();
  }
}
