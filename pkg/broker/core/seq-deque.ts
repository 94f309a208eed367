/**
 * Items ordered by strictly increasing `seq`, with O(1) push/shift and O(log n) lookup of the first
 * item after a sequence (cursor paging never scans). Shifted slots are reclaimed in batches.
 */
export class SeqDeque<T extends { seq: number }> {
  #a: (T | undefined)[] = [];
  #h = 0;

  get length(): number {
    return this.#a.length - this.#h;
  }

  at(i: number): T | undefined {
    return this.#a[this.#h + i];
  }

  first(): T | undefined {
    return this.#a[this.#h];
  }

  last(): T | undefined {
    return this.#a[this.#a.length - 1];
  }

  push(x: T): void {
    this.#a.push(x);
  }

  shift(): T | undefined {
    if (this.#h >= this.#a.length) return undefined;
    const x = this.#a[this.#h];
    this.#a[this.#h++] = undefined;
    if (this.#h >= 4096 && this.#h * 2 >= this.#a.length) {
      this.#a = this.#a.slice(this.#h);
      this.#h = 0;
    }
    return x;
  }

  /** Index (0-based, from the front) of the first item with `seq > after`. */
  indexAfter(after: number): number {
    let lo = this.#h;
    let hi = this.#a.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.#a[mid] as T).seq <= after) lo = mid + 1;
      else hi = mid;
    }
    return lo - this.#h;
  }

  /** Removes the items matching `pred` (O(n); purges only) and returns them. */
  removeWhere(pred: (x: T) => boolean): T[] {
    const removed: T[] = [];
    const kept: T[] = [];
    for (let i = this.#h; i < this.#a.length; i++) {
      const x = this.#a[i] as T;
      (pred(x) ? removed : kept).push(x);
    }
    this.#a = kept;
    this.#h = 0;
    return removed;
  }

  clear(): void {
    this.#a = [];
    this.#h = 0;
  }

  *values(from = 0): IterableIterator<T> {
    for (let i = this.#h + from; i < this.#a.length; i++) yield this.#a[i] as T;
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
