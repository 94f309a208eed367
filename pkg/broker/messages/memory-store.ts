import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { CappedLog, type Caps, entryBytes, KeyIndex } from '../core/capped-log.ts';
import type { Journal } from '../core/journal.ts';
import { maybeCompact, seqLine } from '../core/persist.ts';
import { type Page, pageAfter, SeqDeque, sliceAt } from '../core/seq-deque.ts';
import type { ConversationInfo, MessageFilter, MessageStore, messagesBody, StoredMessage } from './types.ts';

interface Conversation {
  seq: number;
  id: string;
  createdAt: string;
  lastActivity: string;
  messages: number;
  queries: Map<string, number>;
}

export interface MemoryMessageStoreOptions {
  caps: Caps & { conversations: number };
  defaultTtlSeconds: number;
  journal?: Journal;
  now?: () => number;
}

/**
 * Messages and conversations in memory: one capped log in sequence order plus per-conversation and
 * per-query indexes, so every list is a binary search and a slice. Optional journal persistence.
 */
export class MemoryMessageStore implements MessageStore {
  readonly #log: CappedLog<StoredMessage>;
  readonly #byConv = new KeyIndex<StoredMessage>();
  readonly #byQuery = new KeyIndex<StoredMessage>();
  readonly #convs = new Map<string, Conversation>();
  readonly #convOrder = new SeqDeque<Conversation>();
  readonly #listeners: Array<(m: StoredMessage) => void> = [];
  readonly #convListeners: Array<(c: ConversationInfo) => void> = [];
  readonly #opts: MemoryMessageStoreOptions;
  readonly #now: () => number;
  #seq = 0;
  #convSeq = 0;
  #nextExpiry = Number.POSITIVE_INFINITY;

  constructor(opts: MemoryMessageStoreOptions) {
    this.#opts = opts;
    this.#now = opts.now ?? Date.now;
    this.#log = new CappedLog(opts.caps, (e) => this.#unindex(e));
  }

  /** Rebuilds state from the journal (within the caps: older records are evicted as they load). */
  async load(): Promise<void> {
    const j = this.#opts.journal;
    if (!j) return;
    await j.load((v) => {
      if (typeof v.$seq === 'number') this.#seq = Math.max(this.#seq, v.$seq);
      else if (typeof v.$convSeq === 'number') this.#convSeq = Math.max(this.#convSeq, v.$convSeq);
      else if (v.$op === 'conv' && typeof v.id === 'string') this.#addConv(v.id, Number(v.seq), String(v.at));
      else if (v.$op === 'delConv' && typeof v.id === 'string') this.#deleteConv(v.id);
      else if (v.$op === 'del') this.#delete({ conversationId: v.c as string, queryId: v.q as string });
      else if (v.$op === 'clearConvs') this.#clearConvs();
      else if (v.r && typeof v.r === 'object') {
        const r = v.r as { sequence: number; conversation_id: string; query_id: string; timestamp: string };
        this.#seq = Math.max(this.#seq, r.sequence);
        const conv =
          this.#convs.get(r.conversation_id) ??
          this.#addConv(r.conversation_id, ++this.#convSeq, r.timestamp);
        this.#store(
          JSON.stringify(r),
          r.sequence,
          r.conversation_id,
          r.query_id,
          Number(v.x),
          conv,
          r.timestamp,
        );
      }
    });
  }

  head(): number {
    return this.#seq;
  }

  /** Entries in sequence order (sessions are rebuilt from them after a restart). */
  entries(): Iterable<StoredMessage> {
    return this.#log.entries.values();
  }

  conversationHead(): number {
    return this.#convSeq;
  }

  onConversation(listener: (c: ConversationInfo) => void): void {
    this.#convListeners.push(listener);
  }

  onAppend(listener: (m: StoredMessage) => void): void {
    this.#listeners.push(listener);
  }

  async append(input: z.output<typeof messagesBody>): Promise<StoredMessage[]> {
    const now = this.#now();
    const timestamp = new Date(now).toISOString();
    const expiresAt = now + (input.ttl_seconds ?? this.#opts.defaultTtlSeconds) * 1000;
    const conv = this.#ensureConv(input.conversation_id, timestamp);
    const out: StoredMessage[] = [];
    for (const message of input.messages) {
      const seq = ++this.#seq;
      const json = JSON.stringify({
        sequence: seq,
        timestamp,
        conversation_id: input.conversation_id,
        query_id: input.query_id,
        message,
      });
      const e = this.#store(json, seq, input.conversation_id, input.query_id, expiresAt, conv, timestamp);
      this.#opts.journal?.append(`{"x":${expiresAt},"r":${json}}`);
      out.push(e);
    }
    for (const e of out) for (const l of this.#listeners) l(e);
    return out;
  }

  async page(f: MessageFilter, cursor: number, limit: number): Promise<Page<StoredMessage>> {
    const { deque, pred } = this.#select(f);
    if (!deque) return { items: [], total: 0, hasMore: false };
    const p = pageAfter(deque, cursor, limit, pred);
    return { ...p, total: pred ? this.#count(deque, pred) : deque.length };
  }

  async slice(
    f: MessageFilter,
    offset: number,
    limit: number,
  ): Promise<{ items: StoredMessage[]; total: number }> {
    const { deque, pred } = this.#select(f);
    if (!deque) return { items: [], total: 0 };
    if (!pred) return { items: sliceAt(deque, offset, limit), total: deque.length };
    const matching = [...deque.values()].filter(pred);
    return { items: matching.slice(offset, offset + limit), total: matching.length };
  }

  async deleteMessages(f: MessageFilter): Promise<number> {
    const n = this.#delete(f);
    this.#opts.journal?.append(JSON.stringify({ $op: 'del', c: f.conversationId, q: f.queryId }));
    return n;
  }

  async createConversation(id?: string): Promise<{ conversation: ConversationInfo; created: boolean }> {
    const existing = id ? this.#convs.get(id) : undefined;
    if (existing) return { conversation: info(existing), created: false };
    const conv = this.#ensureConv(id ?? randomUUID(), new Date(this.#now()).toISOString());
    return { conversation: info(conv), created: true };
  }

  async conversations(cursor: number, limit: number): Promise<Page<ConversationInfo>> {
    const p = pageAfter(this.#convOrder, cursor, limit);
    return { items: p.items.map(info), total: this.#convs.size, hasMore: p.hasMore };
  }

  async conversationIds(): Promise<string[]> {
    return [...this.#convs.keys()];
  }

  async conversation(id: string): Promise<ConversationInfo | undefined> {
    const c = this.#convs.get(id);
    return c && info(c);
  }

  async deleteConversation(id: string): Promise<{ messages: number } | undefined> {
    if (!this.#convs.has(id)) return undefined;
    const messages = this.#deleteConv(id);
    this.#opts.journal?.append(JSON.stringify({ $op: 'delConv', id }));
    return { messages };
  }

  async deleteConversations(): Promise<{ conversations: number; messages: number }> {
    const conversations = this.#convs.size;
    const messages = this.#delete({});
    this.#clearConvs();
    this.#opts.journal?.append(`{"$op":"clearConvs"}`);
    return { conversations, messages };
  }

  async status() {
    const conversations: Record<string, { message_count: number; query_count: number }> = {};
    for (const c of this.#convs.values())
      conversations[c.id] = { message_count: c.messages, query_count: c.queries.size };
    return { total_conversations: this.#convs.size, total_messages: this.#log.length, conversations };
  }

  /** Drops expired messages and compacts the journal when due (called by the broker's sweeper). */
  sweep(): void {
    const now = this.#now();
    if (now >= this.#nextExpiry) {
      this.#nextExpiry = Number.POSITIVE_INFINITY;
      this.#unindexBulk(this.#log.removeWhere((e) => e.expiresAt <= now));
      for (const e of this.#log.entries.values()) this.#nextExpiry = Math.min(this.#nextExpiry, e.expiresAt);
    }
    this.#opts.journal?.flush();
    maybeCompact(this.#opts.journal, this.#log.bytes, () => this.#snapshot());
  }

  async close(): Promise<void> {
    this.#opts.journal?.append(seqLine(this.#seq));
    this.#opts.journal?.close();
  }

  *#snapshot(): Iterable<string> {
    yield seqLine(this.#seq);
    yield `{"$convSeq":${this.#convSeq}}`;
    for (const c of this.#convOrder.values())
      yield JSON.stringify({ $op: 'conv', id: c.id, seq: c.seq, at: c.createdAt });
    for (const e of this.#log.entries.values()) yield `{"x":${e.expiresAt},"r":${e.json}}`;
  }

  #store(
    json: string,
    seq: number,
    convId: string,
    queryId: string,
    expiresAt: number,
    conv: Conversation,
    at: string,
  ) {
    const e: StoredMessage = {
      seq,
      json,
      bytes: entryBytes(json, 64),
      conversationId: convId,
      queryId,
      expiresAt,
    };
    this.#byConv.add(convId, e);
    this.#byQuery.add(queryId, e);
    conv.messages++;
    conv.lastActivity = at;
    conv.queries.set(queryId, (conv.queries.get(queryId) ?? 0) + 1);
    if (expiresAt < this.#nextExpiry) this.#nextExpiry = expiresAt;
    this.#log.append(e);
    return e;
  }

  #select(f: MessageFilter) {
    if (f.conversationId !== undefined) {
      const deque = this.#byConv.get(f.conversationId);
      const q = f.queryId;
      return { deque, pred: q === undefined ? undefined : (e: StoredMessage) => e.queryId === q };
    }
    if (f.queryId !== undefined) return { deque: this.#byQuery.get(f.queryId), pred: undefined };
    return { deque: this.#log.entries, pred: undefined };
  }

  #count(deque: SeqDeque<StoredMessage>, pred: (e: StoredMessage) => boolean): number {
    let n = 0;
    for (const e of deque.values()) if (pred(e)) n++;
    return n;
  }

  #delete(f: MessageFilter): number {
    const c = f.conversationId;
    const q = f.queryId;
    if (c === undefined && q === undefined) {
      for (const conv of this.#convs.values()) {
        conv.messages = 0;
        conv.queries.clear();
      }
      this.#byConv.clear();
      this.#byQuery.clear();
      return this.#log.clear();
    }
    const gone = this.#log.removeWhere(
      (e) => (c === undefined || e.conversationId === c) && (q === undefined || e.queryId === q),
    );
    this.#unindexBulk(gone);
    return gone.length;
  }

  /** Index upkeep for entries removed from the log in one purge: one pass per affected key. */
  #unindexBulk(gone: StoredMessage[]): void {
    if (gone.length === 0) return;
    const set = new Set(gone);
    const convs = new Set(gone.map((e) => e.conversationId));
    const queries = new Set(gone.map((e) => e.queryId));
    for (const k of convs) this.#byConv.removeFrom(k, (x) => set.has(x));
    for (const k of queries) this.#byQuery.removeFrom(k, (x) => set.has(x));
    for (const e of gone) this.#uncount(e);
  }

  #unindex(e: StoredMessage): void {
    this.#byConv.evict(e.conversationId, e);
    this.#byQuery.evict(e.queryId, e);
    this.#uncount(e);
  }

  #uncount(e: StoredMessage): void {
    const conv = this.#convs.get(e.conversationId);
    if (!conv) return;
    conv.messages--;
    const n = (conv.queries.get(e.queryId) ?? 1) - 1;
    if (n <= 0) conv.queries.delete(e.queryId);
    else conv.queries.set(e.queryId, n);
  }

  #ensureConv(id: string, at: string): Conversation {
    const existing = this.#convs.get(id);
    if (existing) return existing;
    const conv = this.#addConv(id, ++this.#convSeq, at);
    this.#opts.journal?.append(JSON.stringify({ $op: 'conv', id, seq: conv.seq, at }));
    while (this.#convs.size > this.#opts.caps.conversations) {
      const oldest = this.#convOrder.first();
      if (!oldest || oldest === conv) break;
      this.#deleteConv(oldest.id);
    }
    for (const l of this.#convListeners) l(info(conv));
    return conv;
  }

  #addConv(id: string, seq: number, at: string): Conversation {
    this.#convSeq = Math.max(this.#convSeq, seq);
    const conv: Conversation = { seq, id, createdAt: at, lastActivity: at, messages: 0, queries: new Map() };
    this.#convs.set(id, conv);
    this.#convOrder.push(conv);
    return conv;
  }

  #deleteConv(id: string): number {
    if (!this.#convs.has(id)) return 0;
    const n = this.#delete({ conversationId: id });
    this.#convs.delete(id);
    this.#convOrder.removeWhere((c) => c.id === id);
    return n;
  }

  #clearConvs(): void {
    this.#convs.clear();
    this.#convOrder.clear();
  }
}

function info(c: Conversation): ConversationInfo {
  return {
    conversation_id: c.id,
    sequence: c.seq,
    created_at: c.createdAt,
    last_activity: c.lastActivity,
    message_count: c.messages,
    query_count: c.queries.size,
  };
}
