import { type Page, pageAfter, SeqDeque } from '../core/seq-deque.ts';
import type { ConversationInfo, StoredMessage } from './types.ts';

/** A conversation, with the counts of its messages the log still holds. */
export interface Conversation {
  seq: number;
  id: string;
  createdAt: string;
  lastActivity: string;
  messages: number;
  queries: Map<string, number>;
}

export interface ConversationsOptions {
  /** Most conversations kept; creating one more evicts the oldest with its messages. */
  cap: number;
  /** Appends to the messages journal, which holds the conversation operations too. */
  journalOp: (op: Record<string, unknown>) => void;
  /** Deletes a conversation's messages without journaling (the conversation op covers them). */
  dropMessages: (id: string) => number;
}

/**
 * The conversations of the message store in creation order. They have their own sequence (a watch
 * cursor), kept in a `$convSeq` watermark so it is never reused, also after a restart.
 */
export class Conversations {
  readonly #byId = new Map<string, Conversation>();
  readonly #order = new SeqDeque<Conversation>();
  readonly #listeners: Array<(c: ConversationInfo) => void> = [];
  readonly #opts: ConversationsOptions;
  #seq = 0;

  constructor(opts: ConversationsOptions) {
    this.#opts = opts;
  }

  get size(): number {
    return this.#byId.size;
  }

  head(): number {
    return this.#seq;
  }

  get(id: string): Conversation | undefined {
    return this.#byId.get(id);
  }

  ids(): string[] {
    return [...this.#byId.keys()];
  }

  onCreate(listener: (c: ConversationInfo) => void): void {
    this.#listeners.push(listener);
  }

  /** The conversation `id`; a new one is journaled, may evict the oldest, then is announced. */
  ensure(id: string, at: string): Conversation {
    const existing = this.#byId.get(id);
    if (existing) return existing;
    const conv = this.#add(id, this.#seq + 1, at);
    this.#opts.journalOp({ $op: 'conv', id, seq: conv.seq, at });
    while (this.#byId.size > this.#opts.cap) {
      const oldest = this.#order.first();
      if (!oldest || oldest === conv) break;
      this.#drop(oldest.id);
    }
    for (const l of this.#listeners) l(info(conv));
    return conv;
  }

  /**
   * A loaded record's conversation. Replay enforces no cap and announces nothing, it rebuilds what
   * was; a record whose conversation a `clearConvs` forgot (its purge is not journaled) gets a new one.
   */
  restore(id: string, at: string): Conversation {
    return this.#byId.get(id) ?? this.#add(id, this.#seq + 1, at);
  }

  count(conv: Conversation, e: StoredMessage, at: string): void {
    conv.messages++;
    conv.lastActivity = at;
    conv.queries.set(e.queryId, (conv.queries.get(e.queryId) ?? 0) + 1);
  }

  /** A message left the log; its conversation may be gone already. */
  uncount(e: StoredMessage): void {
    const conv = this.#byId.get(e.conversationId);
    if (!conv) return;
    conv.messages--;
    const n = (conv.queries.get(e.queryId) ?? 1) - 1;
    if (n <= 0) conv.queries.delete(e.queryId);
    else conv.queries.set(e.queryId, n);
  }

  /** All messages were purged at once: conversations stay, empty. */
  resetCounts(): void {
    for (const conv of this.#byId.values()) {
      conv.messages = 0;
      conv.queries.clear();
    }
  }

  /** Deletes a conversation and its messages; undefined when there is none. */
  remove(id: string): number | undefined {
    if (!this.#byId.has(id)) return undefined;
    const messages = this.#drop(id);
    this.#opts.journalOp({ $op: 'delConv', id });
    return messages;
  }

  /** Forgets every conversation; the store purges the messages itself. */
  clear(): void {
    this.#forgetAll();
    this.#opts.journalOp({ $op: 'clearConvs' });
  }

  page(cursor: number, limit: number): Page<ConversationInfo> {
    const p = pageAfter(this.#order, cursor, limit);
    return { items: p.items.map(info), total: this.#byId.size, hasMore: p.hasMore };
  }

  counts(): Record<string, { message_count: number; query_count: number }> {
    const out: Record<string, { message_count: number; query_count: number }> = {};
    for (const c of this.#byId.values())
      out[c.id] = { message_count: c.messages, query_count: c.queries.size };
    return out;
  }

  /** Compaction lines, before the records so that loading them finds their conversations. */
  *snapshot(): Iterable<string> {
    yield `{"$convSeq":${this.#seq}}`;
    for (const c of this.#order.values())
      yield JSON.stringify({ $op: 'conv', id: c.id, seq: c.seq, at: c.createdAt });
  }

  /** Replays a conversation line of the journal; false when the line is not one. */
  replay(v: Record<string, unknown>): boolean {
    if (typeof v.$convSeq === 'number') this.#seq = Math.max(this.#seq, v.$convSeq);
    else if (v.$op === 'conv' && typeof v.id === 'string') this.#add(v.id, Number(v.seq), String(v.at));
    else if (v.$op === 'delConv' && typeof v.id === 'string') this.#drop(v.id);
    else if (v.$op === 'clearConvs') this.#forgetAll();
    else return false;
    return true;
  }

  #add(id: string, seq: number, at: string): Conversation {
    this.#seq = Math.max(this.#seq, seq);
    const conv: Conversation = { seq, id, createdAt: at, lastActivity: at, messages: 0, queries: new Map() };
    this.#byId.set(id, conv);
    this.#order.push(conv);
    return conv;
  }

  #drop(id: string): number {
    if (!this.#byId.has(id)) return 0;
    const n = this.#opts.dropMessages(id);
    this.#byId.delete(id);
    this.#order.removeWhere((c) => c.id === id);
    return n;
  }

  #forgetAll(): void {
    this.#byId.clear();
    this.#order.clear();
  }
}

export function info(c: Conversation): ConversationInfo {
  return {
    conversation_id: c.id,
    sequence: c.seq,
    created_at: c.createdAt,
    last_activity: c.lastActivity,
    message_count: c.messages,
    query_count: c.queries.size,
  };
}
