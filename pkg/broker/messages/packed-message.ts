import { ENTRY_OVERHEAD } from '../core/capped-log.ts';
import { PackedEntry } from '../core/packed-entry.ts';
import type { TextSlabs } from '../core/text-slabs.ts';
import type { StoredMessage } from './types.ts';

// The entry object, its three deque slots (log, conversation, query) and the index maps' share.
const MESSAGE_OVERHEAD = ENTRY_OVERHEAD + 64;

/** A message as the in-memory store holds it (see `PackedEntry`). */
export class PackedMessage extends PackedEntry<StoredMessage> implements StoredMessage {
  readonly conversationId: string;
  readonly queryId: string;

  constructor(
    seq: number,
    json: string,
    slabs: TextSlabs,
    conversationId: string,
    queryId: string,
    expiresAt: number,
  ) {
    super(seq, expiresAt);
    this.conversationId = conversationId;
    this.queryId = queryId;
    slabs.put(json, this);
  }

  protected overhead(): number {
    return MESSAGE_OVERHEAD;
  }

  view(json = this.json): StoredMessage {
    const { seq, conversationId, queryId, expiresAt, bytes } = this;
    return { seq, json, bytes, conversationId, queryId, expiresAt };
  }
}
