/**
 * Off-heap storage of many small immutable texts (stored entries' JSON) as UTF-8 in shared
 * buffers. A string per entry keeps every byte on the V8 heap, and V8 lets the old generation grow
 * well past what is live between full collections, so a store holding 200 MB of strings made a
 * broker of 450+ MB; bytes in slabs cost what they hold. Slabs are counted, not left to the garbage
 * collector: one whose texts are all released is reused at once (left to V8, dead slabs piled up
 * to ~60 MB of external memory between full collections), and `compact` moves the texts stranded
 * in mostly-dead slabs so deletes out of order cannot pin them.
 */

/** A buffer texts are packed into, and how many of its bytes are still held. */
export interface Slab {
  readonly buf: Buffer;
  live: number;
}

/** Where one text lives; `slab` is undefined once the text was released. */
export interface SlabText {
  slab: Slab | undefined;
  off: number;
  len: number;
}

const SLAB_BYTES = 256 * 1024;
// A text this large gets a buffer of its own: packing it would strand most of a slab's tail.
const OWN_BUFFER_BYTES = 16 * 1024;
// Emptied slabs kept for reuse; past these, memory goes back after a mass delete.
const SPARE_SLABS = 4;

export class TextSlabs {
  readonly #slabBytes: number;
  #slab: Slab;
  #used = 0;
  readonly #spare: Slab[] = [];
  // Bytes of the buffers holding at least one text (transitions of `live` from and to 0).
  #inUse = 0;

  constructor(slabBytes = SLAB_BYTES) {
    this.#slabBytes = slabBytes;
    this.#slab = this.#fresh();
  }

  /** Copies `text` into a slab and points `into` at it. */
  put(text: string, into: SlabText): void {
    const len = Buffer.byteLength(text);
    const { slab, off } = this.#claim(len, into);
    slab.buf.write(text, off, len, 'utf8');
  }

  /**
   * Stores the text `prefix` (ASCII) followed by the UTF-8 bytes `src[start, end)`, copied as they
   * are: for texts that arrive as bytes (spans from the decoding thread), no string is built.
   */
  putJoined(prefix: string, src: Uint8Array, start: number, end: number, into: SlabText): void {
    const { slab, off } = this.#claim(prefix.length + end - start, into);
    slab.buf.write(prefix, off, 'latin1');
    slab.buf.set(src.subarray(start, end), off + prefix.length);
  }

  /** Room for `len` bytes, counted as held by `into`. */
  #claim(len: number, into: SlabText): { slab: Slab; off: number } {
    let slab: Slab;
    let off = 0;
    if (len >= OWN_BUFFER_BYTES) {
      slab = { buf: Buffer.allocUnsafeSlow(len), live: 0 };
    } else {
      if (this.#used + len > this.#slabBytes) this.#next();
      slab = this.#slab;
      off = this.#used;
      this.#used += len;
    }
    if (slab.live === 0 && len > 0) this.#inUse += slab.buf.length;
    slab.live += len;
    into.slab = slab;
    into.off = off;
    into.len = len;
    return { slab, off };
  }

  /** Bytes of buffers this holds: those with live texts, the one being filled and the spares. */
  get heldBytes(): number {
    const current = this.#slab.live === 0 ? this.#slab.buf.length : 0;
    return this.#inUse + current + this.#spare.length * this.#slabBytes;
  }

  /** Gives the text's bytes back; an emptied slab is reused by the next write. */
  release(t: SlabText): void {
    const slab = t.slab;
    if (!slab) return;
    t.slab = undefined;
    if (t.len === 0) return;
    slab.live -= t.len;
    if (slab.live === 0) this.#inUse -= slab.buf.length;
    if (slab.live === 0 && slab !== this.#slab && slab.buf.length === this.#slabBytes)
      if (this.#spare.length < SPARE_SLABS) this.#spare.push(slab);
  }

  /**
   * Moves the texts of slabs less than half live into the current slab: `texts` yields all live
   * texts (it is walked twice); each moved one is updated in place. Returns how many moved.
   */
  compact(texts: () => Iterable<SlabText>): number {
    const sparse = new Set<Slab>();
    for (const t of texts()) {
      const s = t.slab as Slab;
      if (s !== this.#slab && s.buf.length === this.#slabBytes && s.live * 2 < s.buf.length) sparse.add(s);
    }
    if (sparse.size === 0) return 0;
    let moved = 0;
    for (const t of texts()) {
      if (!sparse.has(t.slab as Slab)) continue;
      const text = slabText(t);
      this.release(t);
      this.put(text, t);
      moved++;
    }
    return moved;
  }

  #next(): void {
    const left = this.#slab;
    this.#slab = this.#spare.pop() ?? this.#fresh();
    this.#used = 0;
    // The slab being left may already be empty: its texts were released while it was filled.
    if (left.live === 0 && this.#spare.length < SPARE_SLABS) this.#spare.push(left);
  }

  #fresh(): Slab {
    return { buf: Buffer.allocUnsafeSlow(this.#slabBytes), live: 0 };
  }
}

/** The text `t` holds (it must not have been released). */
export function slabText(t: SlabText): string {
  return (t.slab as Slab).buf.toString('utf8', t.off, t.off + t.len);
}
