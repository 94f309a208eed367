import type { Entry } from './capped-log.ts';
import { type Slab, type SlabText, slabText } from './text-slabs.ts';

/**
 * An entry of an in-memory store with its JSON kept as UTF-8 in a slab (off the V8 heap). The
 * bytes go back to the slabs when the store drops it and may be reused at once, so the object
 * never leaves its store: readers get a view (`view`) holding the JSON as a string. The subclass's
 * constructor puts the JSON in the slabs (`TextSlabs.put` or `putJoined`).
 */
export abstract class PackedEntry<V extends Entry> implements Entry, SlabText {
  readonly seq: number;
  readonly expiresAt: number;
  slab: Slab | undefined;
  off = 0;
  len = 0;

  constructor(seq: number, expiresAt: number) {
    this.seq = seq;
    this.expiresAt = expiresAt;
  }

  get json(): string {
    return slabText(this);
  }

  /** What the byte cap counts: the UTF-8 bytes it holds in its slab and the entry's overhead. */
  get bytes(): number {
    return this.len + this.overhead();
  }

  protected abstract overhead(): number;

  /** What readers get: the entry's fields with the JSON as a string (decoded now unless given). */
  abstract view(json?: string): V;
}

/**
 * Views of a page of entries. Consecutive writes sit side by side in one slab, so a page is
 * usually one run of bytes: decoded in one call and cut into its entries (by byte offsets, which
 * equal string offsets when the run is ASCII), instead of one native call per entry.
 */
export function viewsOf<V extends Entry>(entries: PackedEntry<V>[]): V[] {
  const out: V[] = [];
  let i = 0;
  while (i < entries.length) {
    const first = entries[i] as PackedEntry<V>;
    let j = i + 1;
    let end = first.off + first.len;
    for (; j < entries.length; j++) {
      const e = entries[j] as PackedEntry<V>;
      if (e.slab !== first.slab || e.off !== end) break;
      end += e.len;
    }
    const run = (first.slab as Slab).buf.toString('utf8', first.off, end);
    const ascii = run.length === end - first.off;
    for (let k = i; k < j; k++) {
      const e = entries[k] as PackedEntry<V>;
      out.push(ascii ? e.view(run.slice(e.off - first.off, e.off - first.off + e.len)) : e.view());
    }
    i = j;
  }
  return out;
}
