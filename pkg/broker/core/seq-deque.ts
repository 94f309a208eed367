/**
 * Items ordered by strictly increasing `seq`, with O(1) push/shift and O(log n) lookup of the first
 * item after a sequence (cursor paging never scans). A ring over a power-of-two array: a full
 * store pushes one and shifts one per write, and a ring does that without allocating (slicing off
 * the shifted head left arrays of megabytes for the collector at every turn of a full store).
 */
export class SeqDeque<T extends { seq: number }> {
  #a: (T | undefined)[] = new Array(8);
  #mask = 7;
  #h = 0;
  #n = 0;

  get length(): number {
    return this.#n;
  }

  at(i: number): T | undefined {
    return i < 0 || i >= this.#n ? undefined : this.#a[(this.#h + i) & this.#mask];
  }

  first(): T | undefined {
    return this.at(0);
  }

  last(): T | undefined {
    return this.at(this.#n - 1);
  }

  push(x: T): void {
    if (this.#n === this.#a.length) this.#grow();
    this.#a[(this.#h + this.#n) & this.#mask] = x;
    this.#n++;
  }

  shift(): T | undefined {
    if (this.#n === 0) return undefined;
    const x = this.#a[this.#h];
    this.#a[this.#h] = undefined;
    this.#h = (this.#h + 1) & this.#mask;
    this.#n--;
    return x;
  }

  /** Index (0-based, from the front) of the first item with `seq > after`. */
  indexAfter(after: number): number {
    let lo = 0;
    let hi = this.#n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.#a[(this.#h + mid) & this.#mask] as T).seq <= after) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Removes the items matching `pred` (O(n); purges only) and returns them. */
  removeWhere(pred: (x: T) => boolean): T[] {
    const removed: T[] = [];
    const kept: T[] = [];
    for (const x of this.values()) (pred(x) ? removed : kept).push(x);
    if (removed.length === 0) return removed;
    this.clear();
    for (const x of kept) this.push(x);
    return removed;
  }

  clear(): void {
    this.#a = new Array(8);
    this.#mask = 7;
    this.#h = 0;
    this.#n = 0;
  }

  *values(from = 0): IterableIterator<T> {
    for (let i = from; i < this.#n; i++) yield this.#a[(this.#h + i) & this.#mask] as T;
  }

  #grow(): void {
    const next: (T | undefined)[] = new Array(this.#a.length * 2);
    for (let i = 0; i < this.#n; i++) next[i] = this.#a[(this.#h + i) & this.#mask];
    this.#a = next;
    this.#mask = next.length - 1;
    this.#h = 0;
  }
}

export interface Page<T> {
  items: T[];
  total: number;
  hasMore: boolean;
}

/** Up to `limit` items with `seq > cursor` (matching `pred`), oldest first. */
export function pageAfter<T extends { seq: number }>(
  d: SeqDeque<T>,
  cursor: number,
  limit: number,
  pred?: (x: T) => boolean,
): { items: T[]; hasMore: boolean } {
  const items: T[] = [];
  for (let i = d.indexAfter(cursor); i < d.length; i++) {
    const x = d.at(i) as T;
    if (pred && !pred(x)) continue;
    if (items.length === limit) return { items, hasMore: true };
    items.push(x);
  }
  return { items, hasMore: false };
}

/** Up to `limit` items after skipping `offset`, oldest first (memory-contract paging). */
export function sliceAt<T extends { seq: number }>(d: SeqDeque<T>, offset: number, limit: number): T[] {
  const out: T[] = [];
  for (let i = offset; i < d.length && out.length < limit; i++) out.push(d.at(i) as T);
  return out;
}
