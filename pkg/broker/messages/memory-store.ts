import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { Caps, StoreStats } from '../core/capped-log.ts';
import { IndexedLog } from '../core/indexed-log.ts';
import type { Journal } from '../core/journal.ts';
import { viewsOf } from '../core/packed-entry.ts';
import { type Page, pageAfter, type SeqDeque, sliceAt } from '../core/seq-deque.ts';
import { TextSlabs } from '../core/text-slabs.ts';
import { Conversations, info } from './conversations.ts';
import { PackedMessage } from './packed-message.ts';
import { recordJson, recordTail } from './record-json.ts';
import type { ConversationInfo, MessageFilter, MessageStore, messagesBody, StoredMessage } from './types.ts';

export interface MemoryMessageStoreOptions {
  caps: Caps & { conversations: number };
  defaultTtlSeconds: number;
  journal?: Journal;
  now?: () => number;
}

interface MessageRecord {
  sequence: number;
  timestamp: string;
  conversation_id: string;
  query_id: string;
}

type Pred = (e: StoredMessage) => boolean;

/**
 * Messages in memory, indexed by conversation and by query, so every list is a binary search and a
 * slice; the conversations they belong to are kept beside them. Their JSON lives off the V8 heap
 * (`TextSlabs`), the largest share of a full store. Optional journal persistence.
 */
export class MemoryMessageStore implements MessageStore {
  readonly #log: IndexedLog<PackedMessage, 'conversation' | 'query'>;
  readonly #convs: Conversations;
  readonly #slabs = new TextSlabs();
  readonly #listeners: Array<(m: StoredMessage) => void> = [];
  readonly #ttlSeconds: number;

  constructor(opts: MemoryMessageStoreOptions) {
    this.#ttlSeconds = opts.defaultTtlSeconds;
    this.#log = new IndexedLog({
      caps: opts.caps,
      keys: { conversation: (e) => e.conversationId, query: (e) => e.queryId },
      indexEmpty: true,
      journal: opts.journal,
      now: opts.now,
      revive: (r, json, x) => this.#revive(r as unknown as MessageRecord, json, x),
      ownLine: (v) => this.#replay(v),
      onEvict: (e) => {
        this.#convs.uncount(e);
        this.#slabs.release(e);
      },
      onRemove: (gone) => {
        for (const e of gone) {
          this.#convs.uncount(e);
          this.#slabs.release(e);
        }
        this.#slabs.compact(() => this.#log.log.entries.values());
      },
    });
    this.#convs = new Conversations({
      cap: opts.caps.conversations,
      journalOp: (op) => this.#log.journalOp(op),
      dropMessages: (id) => this.#delete({ conversationId: id }),
    });
  }

  /** Rebuilds state from the journal (within the caps: older records are evicted as they load). */
  load(): Promise<void> {
    return this.#log.load();
  }

  head(): number {
    return this.#log.seq;
  }

  stats(): StoreStats {
    const { log } = this.#log;
    return { items: log.length, bytes: log.bytes, evicted: log.evicted, slabBytes: this.#slabs.heldBytes };
  }

  /** Entries in sequence order (sessions are rebuilt from them after a restart). */
  *entries(): Iterable<StoredMessage> {
    for (const e of this.#log.log.entries.values()) yield e.view();
  }

  conversationHead(): number {
    return this.#convs.head();
  }

  onConversation(listener: (c: ConversationInfo) => void): void {
    this.#convs.onCreate(listener);
  }

  onAppend(listener: (m: StoredMessage) => void): void {
    this.#listeners.push(listener);
  }

  async append(input: z.output<typeof messagesBody>): Promise<StoredMessage[]> {
    const now = this.#log.now();
    const timestamp = new Date(now).toISOString();
    const expiresAt = now + (input.ttl_seconds ?? this.#ttlSeconds) * 1000;
    const conv = this.#convs.ensure(input.conversation_id, timestamp);
    const tail = recordTail(timestamp, input.conversation_id, input.query_id);
    const out = input.messages.map((message) => {
      const seq = this.#log.nextSeq();
      const json = recordJson(seq, tail(message));
      const e = new PackedMessage(seq, json, this.#slabs, input.conversation_id, input.query_id, expiresAt);
      this.#convs.count(conv, e, timestamp);
      this.#log.append(e);
      return e.view(json);
    });
    for (const e of out) for (const l of this.#listeners) l(e);
    return out;
  }

  async page(f: MessageFilter, cursor: number, limit: number): Promise<Page<StoredMessage>> {
    const { deque, pred } = this.#select(f);
    if (!deque) return { items: [], total: 0, hasMore: false };
    const p = pageAfter(deque, cursor, limit, pred);
    return {
      items: viewsOf(p.items),
      hasMore: p.hasMore,
      total: pred ? countOf(deque, pred) : deque.length,
    };
  }

  async slice(
    f: MessageFilter,
    offset: number,
    limit: number,
  ): Promise<{ items: StoredMessage[]; total: number }> {
    const { deque, pred } = this.#select(f);
    if (!deque) return { items: [], total: 0 };
    if (!pred) return { items: viewsOf(sliceAt(deque, offset, limit)), total: deque.length };
    const matching = [...deque.values()].filter(pred);
    return { items: viewsOf(matching.slice(offset, offset + limit)), total: matching.length };
  }

  async deleteMessages(f: MessageFilter): Promise<number> {
    const n = this.#delete(f);
    this.#log.journalOp({ $op: 'del', c: f.conversationId, q: f.queryId });
    return n;
  }

  async createConversation(id?: string): Promise<{ conversation: ConversationInfo; created: boolean }> {
    const existing = id ? this.#convs.get(id) : undefined;
    if (existing) return { conversation: info(existing), created: false };
    const conv = this.#convs.ensure(id ?? randomUUID(), new Date(this.#log.now()).toISOString());
    return { conversation: info(conv), created: true };
  }

  async conversations(cursor: number, limit: number): Promise<Page<ConversationInfo>> {
    return this.#convs.page(cursor, limit);
  }

  async conversationIds(): Promise<string[]> {
    return this.#convs.ids();
  }

  async conversation(id: string): Promise<ConversationInfo | undefined> {
    const c = this.#convs.get(id);
    return c && info(c);
  }

  async deleteConversation(id: string): Promise<{ messages: number } | undefined> {
    const messages = this.#convs.remove(id);
    return messages === undefined ? undefined : { messages };
  }

  async deleteConversations(): Promise<{ conversations: number; messages: number }> {
    const conversations = this.#convs.size;
    const messages = this.#delete({});
    this.#convs.clear();
    return { conversations, messages };
  }

  async status() {
    return {
      total_conversations: this.#convs.size,
      total_messages: this.#log.log.length,
      conversations: this.#convs.counts(),
    };
  }

  /** Drops expired messages and compacts the journal when due (called by the broker's sweeper). */
  sweep(): void {
    this.#log.sweep(() => this.#convs.snapshot());
  }

  async close(): Promise<void> {
    this.#log.close();
  }

  #entry(r: MessageRecord, json: string, expiresAt: number): PackedMessage {
    return new PackedMessage(r.sequence, json, this.#slabs, r.conversation_id, r.query_id, expiresAt);
  }

  #revive(r: MessageRecord, json: string, expiresAt: number): PackedMessage {
    const conv = this.#convs.restore(r.conversation_id, r.timestamp);
    const e = this.#entry(r, json, expiresAt);
    this.#convs.count(conv, e, r.timestamp);
    return e;
  }

  /** Every `$op` of this journal is the store's own: its shapes predate IndexedLog's del/clear. */
  #replay(v: Record<string, unknown>): boolean {
    if (v.$op === 'del') this.#delete({ conversationId: v.c as string, queryId: v.q as string });
    else if (!this.#convs.replay(v)) return typeof v.$op === 'string';
    return true;
  }

  /** The narrowest deque in sequence order holding the filter's messages, and what to filter by. */
  #select(f: MessageFilter): { deque: SeqDeque<PackedMessage> | undefined; pred?: Pred | undefined } {
    const q = f.queryId;
    if (f.conversationId !== undefined)
      return {
        deque: this.#log.index('conversation', f.conversationId),
        pred: q === undefined ? undefined : (e) => e.queryId === q,
      };
    if (q !== undefined) return { deque: this.#log.index('query', q) };
    return { deque: this.#log.log.entries };
  }

  /** Deletes without journaling: conversation deletes and journal replay cover their own. */
  #delete(f: MessageFilter): number {
    const c = f.conversationId;
    const q = f.queryId;
    if (c === undefined && q === undefined) {
      this.#convs.resetCounts();
      for (const e of this.#log.log.entries.values()) this.#slabs.release(e);
      return this.#log.dropAll();
    }
    return this.#log.dropWhere(
      (e) => (c === undefined || e.conversationId === c) && (q === undefined || e.queryId === q),
    );
  }
}

function countOf(deque: SeqDeque<PackedMessage>, pred: Pred): number {
  let n = 0;
  for (const e of deque.values()) if (pred(e)) n++;
  return n;
}
