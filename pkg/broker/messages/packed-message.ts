import { ENTRY_OVERHEAD } from '../core/capped-log.ts';
import type { Slab, SlabText, TextSlabs } from '../core/text-slabs.ts';
import type { StoredMessage } from './types.ts';

// The entry object, its three deque slots (log, conversation, query) and the index maps' share.
const MESSAGE_OVERHEAD = ENTRY_OVERHEAD + 64;

/**
 * A message as the in-memory store holds it: its JSON kept as UTF-8 in a slab (off the V8 heap).
 * The bytes go back to the slabs when the store drops it and may be reused at once, so this object
 * never leaves the store: readers get a `StoredMessage` view with the JSON as a string.
 */
export class PackedMessage implements StoredMessage, SlabText {
  readonly seq: number;
  readonly conversationId: string;
  readonly queryId: string;
  readonly expiresAt: number;
  slab: Slab | undefined;
  off = 0;
  len = 0;

  constructor(
    seq: number,
    json: string,
    slabs: TextSlabs,
    conversationId: string,
    queryId: string,
    expiresAt: number,
  ) {
    this.seq = seq;
    this.conversationId = conversationId;
    this.queryId = queryId;
    this.expiresAt = expiresAt;
    slabs.put(json, this);
  }

  get json(): string {
    return (this.slab as Slab).buf.toString('utf8', this.off, this.off + this.len);
  }

  /** What the byte cap counts: the UTF-8 bytes it holds in its slab and its overhead. */
  get bytes(): number {
    return this.len + MESSAGE_OVERHEAD;
  }

  /** What readers get: the same fields with the JSON as a string (decoded now unless given). */
  view(json = this.json): StoredMessage {
    const { seq, conversationId, queryId, expiresAt, bytes } = this;
    return { seq, json, bytes, conversationId, queryId, expiresAt };
  }
}

/**
 * Views of a page of entries. Consecutive writes sit side by side in one slab, so a page is
 * usually one run of bytes: decoded in one call and cut into its entries (by byte offsets, which
 * equal string offsets when the run is ASCII), instead of one native call per entry.
 */
export function viewsOf(entries: PackedMessage[]): StoredMessage[] {
  const out: StoredMessage[] = [];
  let i = 0;
  while (i < entries.length) {
    const first = entries[i] as PackedMessage;
    let j = i + 1;
    let end = first.off + first.len;
    for (; j < entries.length; j++) {
      const e = entries[j] as PackedMessage;
      if (e.slab !== first.slab || e.off !== end) break;
      end += e.len;
    }
    const run = (first.slab as Slab).buf.toString('utf8', first.off, end);
    const ascii = run.length === end - first.off;
    for (let k = i; k < j; k++) {
      const e = entries[k] as PackedMessage;
      out.push(ascii ? e.view(run.slice(e.off - first.off, e.off - first.off + e.len)) : e.view());
    }
    i = j;
  }
  return out;
}
