/**
 * A reader of JSON as UTF-8 bytes, for scans that must validate a document without building it
 * (`export-scanner.ts`): a recursive descent whose subclass reads the parts it wants itself and
 * leaves the rest to `value`, which validates what it skips. Objects are read as
 * `if (enter(…)) do { key; value } while (more(…))`. Whatever is not JSON — or not what the
 * subclass wants — throws `NOT_READ`. The bytes must be valid UTF-8 (checked by the caller).
 */

/** A byte range `[start, end)` of the document. */
export type Range = [start: number, end: number];

/** Thrown when the bytes are not read (not JSON, too deep, or refused by the subclass). */
export const NOT_READ: unique symbol = Symbol('not read');

/** What `key` gives for a key not in the reader's table (or written with an escape). */
export const OTHER = -1;

/** Keys a reader tells apart, as bytes and by length (a key is compared with a few at most). */
export class KeyTable {
  readonly bytes: Uint8Array[];
  readonly byLength: number[][] = [];

  constructor(keys: readonly string[]) {
    this.bytes = keys.map(ascii);
    for (const [k, b] of this.bytes.entries()) {
      this.byLength[b.length] ??= [];
      this.byLength[b.length]?.push(k);
    }
  }
}

export const ascii = (s: string): Uint8Array => Buffer.from(s, 'latin1');
const TRUE = ascii('true');
const FALSE = ascii('false');
const NULL = ascii('null');

export class JsonBytesReader {
  readonly b: Uint8Array;
  readonly maxDepth: number;
  readonly #keys: KeyTable;
  /** The cursor. */
  i = 0;
  /** Set by `string` (and so by `key`): whether the string just read holds an escape. */
  escaped = false;

  /** `maxDepth`: how many containers may be open at once (past it: NOT_READ). */
  constructor(b: Uint8Array, maxDepth: number, keys: KeyTable) {
    this.b = b;
    this.maxDepth = maxDepth;
    this.#keys = keys;
  }

  /** Any value; containers opened here count from `depth` (the open containers around it). */
  value(depth: number): void {
    const c = this.peek();
    if (c === 0x22) this.string();
    else if (c === 0x7b) {
      if (this.enter(0x7b, depth + 1))
        do {
          this.skipKey();
          this.value(depth + 1);
        } while (this.more(0x7d));
    } else if (c === 0x5b) {
      if (this.enter(0x5b, depth + 1))
        do this.value(depth + 1);
        while (this.more(0x5d));
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) this.number();
    else if (c === 0x74) this.literal(TRUE);
    else if (c === 0x66) this.literal(FALSE);
    else if (c === 0x6e) this.literal(NULL);
    else throw NOT_READ;
  }

  valueRange(depth: number): Range {
    const start = this.skipWs();
    this.value(depth);
    return [start, this.i];
  }

  /**
   * Opens the object or array `ch` (the `depth`-th open container); false when it is empty (and
   * then already closed).
   */
  enter(ch: number, depth: number): boolean {
    if (depth > this.maxDepth || this.peek() !== ch) throw NOT_READ;
    this.i++;
    if (this.peek() !== ch + 2) return true; // `}` and `]` follow `{` and `[` by two
    this.i++;
    return false;
  }

  /** After a member or element: true at a comma (another follows), false at `close` (read). */
  more(close: number): boolean {
    const c = this.peek();
    this.i++;
    if (c === 0x2c) return true;
    if (c === close) return false;
    throw NOT_READ;
  }

  /** A member's key and colon: which key it is (OTHER for the rest); sets `escaped`. */
  key(): number {
    const start = this.skipKey();
    return this.escaped ? OTHER : this.keyOf(start + 1, this.keyEnd);
  }

  /** Where the key `skipKey` read ends (its closing quote). */
  keyEnd = 0;

  /** A member's key and colon, whichever it is (where every key is read alike); where it starts. */
  skipKey(): number {
    const start = this.skipWs();
    if (this.b[start] !== 0x22) throw NOT_READ;
    this.string();
    this.keyEnd = this.i - 1;
    if (this.peek() !== 0x3a) throw NOT_READ;
    this.i++;
    return start;
  }

  /** Which of the reader's keys `[start, end)` is, or OTHER. */
  keyOf(start: number, end: number): number {
    const candidates = this.#keys.byLength[end - start];
    if (candidates)
      for (const k of candidates) if (this.sameBytes(start, end, this.#keys.bytes[k] as Uint8Array)) return k;
    return OTHER;
  }

  /** A string at the cursor (a quote), through its closing quote; sets `escaped`. */
  string(): void {
    const b = this.b;
    const n = b.length;
    let i = this.i + 1;
    let escaped = false;
    for (;;) {
      if (i >= n) throw NOT_READ;
      const c = b[i] as number;
      if (c === 0x22) break;
      if (c === 0x5c) {
        escaped = true;
        i = escapeEnd(b, i);
      } else if (c < 0x20) throw NOT_READ;
      else i++;
    }
    this.escaped = escaped;
    this.i = i + 1;
  }

  number(): void {
    const b = this.b;
    let i = this.i;
    if (b[i] === 0x2d) i++;
    if (b[i] === 0x30) i++;
    else if (isDigit(b[i])) while (isDigit(b[i])) i++;
    else throw NOT_READ;
    if (b[i] === 0x2e) {
      i++;
      if (!isDigit(b[i])) throw NOT_READ;
      while (isDigit(b[i])) i++;
    }
    if (b[i] === 0x65 || b[i] === 0x45) {
      i++;
      if (b[i] === 0x2b || b[i] === 0x2d) i++;
      if (!isDigit(b[i])) throw NOT_READ;
      while (isDigit(b[i])) i++;
    }
    this.i = i;
  }

  literal(word: Uint8Array): void {
    if (!this.sameBytes(this.i, this.i + word.length, word)) throw NOT_READ;
    this.i += word.length;
  }

  /** The next non-blank byte (the cursor moves to it). */
  peek(): number {
    const c = this.b[this.i] as number;
    return c > 0x20 ? c : (this.b[this.skipWs()] as number);
  }

  skipWs(): number {
    const b = this.b;
    let i = this.i;
    if ((b[i] as number) > 0x20) return i;
    for (let c = b[i]; c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = b[++i]);
    this.i = i;
    return i;
  }

  sameBytes(start: number, end: number, k: Uint8Array): boolean {
    if (end - start !== k.length) return false;
    for (let j = 0; j < k.length; j++) if (this.b[start + j] !== k[j]) return false;
    return true;
  }

  latin1(start: number, end: number): string {
    const b = this.b;
    return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('latin1', start, end);
  }
}

const isDigit = (c: number | undefined) => c !== undefined && c >= 0x30 && c <= 0x39;
const isHex = (c: number | undefined) =>
  c !== undefined && ((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46));

/** Index after the escape at `i` (a backslash), or NOT_READ when it is not one JSON allows. */
function escapeEnd(b: Uint8Array, i: number): number {
  const c = b[i + 1];
  if (c === 0x75) {
    for (let j = i + 2; j < i + 6; j++) if (!isHex(b[j])) throw NOT_READ;
    return i + 6;
  }
  // " \ / b f n r t
  if (
    c === 0x22 ||
    c === 0x5c ||
    c === 0x2f ||
    c === 0x62 ||
    c === 0x66 ||
    c === 0x6e ||
    c === 0x72 ||
    c === 0x74
  )
    return i + 2;
  throw NOT_READ;
}
