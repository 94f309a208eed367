import type pg from 'pg';
import type { z } from 'zod';
import type { Page } from '../core/seq-deque.ts';
import { CHANNELS, type Feed, guarded, inTransaction, LOCKS, type PgBackend } from '../pg/index.ts';
import { PageCache, type PageCacheOptions, type PageCacheStats } from '../pg/page-cache.ts';
import { VersionProbe } from '../pg/version-probe.ts';
import { AppendBatcher } from './pg-append.ts';
import { PgConversations } from './pg-conversations.ts';
import {
  deleteSql,
  FEED_READ,
  FEED_START,
  lockConversationsSql,
  MESSAGES_VERSION,
  type MessageRow,
  pageSql,
  reapBatch,
  toStored,
} from './pg-sql.ts';
import type {
  ConversationInfo,
  MemoryStatus,
  MessageFilter,
  MessageStore,
  messagesBody,
  StoredMessage,
} from './types.ts';

export interface PgMessageStoreOptions {
  /** Default expiry of a message; a POST's `ttl_seconds` wins (MESSAGE_VISIBILITY_TTL_SECONDS). */
  defaultTtlSeconds: number;
  /** Called by close() (a store that owns its backend closes it there). */
  onClose?: () => Promise<void> | undefined;
  /** Bounds of the in-memory page cache (pg/page-cache.ts). */
  pageCache?: PageCacheOptions | undefined;
  /**
   * Session roll-up inside the append's transaction (sessions on PostgreSQL too): atomic with the
   * insert; the returned function runs after COMMIT.
   */
  rollup?: ((client: pg.PoolClient, rows: StoredMessage[], at: string) => Promise<() => void>) | undefined;
}

const BACKEND = 'postgres';

type PageRow = MessageRow & { total: number; ver: number; until: number | null };

/** Opens the PostgreSQL message store on a process's backend: its two feeds and its reap task. */
export async function openPgMessageStore(
  backend: PgBackend,
  opts: PgMessageStoreOptions,
): Promise<PgMessageStore> {
  const store = new PgMessageStore(backend, opts);
  await store.init();
  return store;
}

/**
 * Messages and conversations in PostgreSQL. Sequences come from PostgreSQL SEQUENCEs (shared by all
 * replicas, never reused); pages are index range scans; totals come from counters kept on write
 * (pg-sql.ts). Listeners get every message of every replica, in sequence order, through the feed.
 */
export class PgMessageStore implements MessageStore {
  readonly #pool: pg.Pool;
  readonly #backend: PgBackend;
  readonly #opts: PgMessageStoreOptions;
  readonly #listeners: Array<(m: StoredMessage) => void> = [];
  readonly #convs: PgConversations;
  readonly #appends: AppendBatcher;
  readonly #pages: PageCache<Page<StoredMessage>>;
  #messages: Feed<StoredMessage> | undefined;

  constructor(backend: PgBackend, opts: PgMessageStoreOptions) {
    this.#backend = backend;
    this.#pool = backend.database.pool;
    this.#opts = opts;
    this.#convs = new PgConversations(this.#pool);
    this.#appends = new AppendBatcher(backend.database.writer, opts.defaultTtlSeconds, opts.rollup);
    this.#pages = new PageCache(new VersionProbe(this.#pool, MESSAGES_VERSION), opts.pageCache);
  }

  /** How the page cache is doing (hits and misses since start, what it holds). */
  pageCacheStats(): PageCacheStats {
    return this.#pages.stats();
  }

  async init(): Promise<void> {
    this.#messages = await this.#backend.feed<StoredMessage>(CHANNELS.messages, {
      name: 'messages',
      read: async (after, limit) =>
        (await this.#pool.query<MessageRow>(FEED_READ, [after, limit])).rows.map(toStored),
      start: async () => Number((await this.#pool.query(FEED_START)).rows[0]?.seq ?? 0),
      deliver: (m) => {
        for (const l of this.#listeners) l(m);
      },
    });
    await this.#convs.init(this.#backend);
    this.#backend.reaper.add({
      name: 'messages',
      lockId: LOCKS.reapMessages,
      batch: (c, n) => reapBatch(c, n),
    });
  }

  head(): number {
    return this.#messages?.head() ?? 0;
  }

  conversationHead(): number {
    return this.#convs.head();
  }

  /** The highest message sequence committed by any replica (start of a live-only watch). */
  committedHead(): Promise<number> {
    return this.#messages?.committed() ?? Promise.resolve(0);
  }

  conversationCommittedHead(): Promise<number> {
    return this.#convs.committedHead();
  }

  onAppend(listener: (m: StoredMessage) => void): void {
    this.#listeners.push(listener);
  }

  onConversation(listener: (c: ConversationInfo) => void): void {
    this.#convs.onCreate(listener);
  }

  async append(input: z.output<typeof messagesBody>): Promise<StoredMessage[]> {
    const { rows, conv } = await this.#appends.append(input);
    if (conv)
      // Announced as created (empty), like the memory store does, before its messages.
      void this.#convs.created({
        conversation_id: input.conversation_id,
        sequence: conv.seq,
        created_at: conv.created_at.toISOString(),
        last_activity: conv.created_at.toISOString(),
        message_count: 0,
        query_count: 0,
      });
    // The other replicas were told by the batch itself (pg-batch-sql.ts ANNOUNCED), at its commit.
    const last = rows.at(-1);
    if (last && this.#messages) {
      this.#messages.local(rows);
      // Resolve after this process's listeners saw the rows (bounded: the write is committed anyway).
      await this.#messages.settle(last.seq);
    }
    return rows;
  }

  page(f: MessageFilter, cursor: number, limit: number): Promise<Page<StoredMessage>> {
    return guarded(BACKEND, () =>
      this.#pages.get(JSON.stringify(['c', f.conversationId, f.queryId, cursor, limit]), async () => {
        const r = await this.#read(pageSql(f, 'cursor'), cursor, limit + 1);
        const hasMore = r.items.length > limit;
        const items = hasMore ? r.items.slice(0, limit) : r.items;
        return { ...r, value: { items, total: r.total, hasMore } };
      }),
    );
  }

  slice(f: MessageFilter, offset: number, limit: number): Promise<{ items: StoredMessage[]; total: number }> {
    return guarded(BACKEND, () =>
      this.#pages.get(JSON.stringify(['o', f.conversationId, f.queryId, offset, limit]), async () => {
        const r = await this.#read(pageSql(f, 'offset'), offset, limit);
        return {
          ...r,
          value: { items: r.items, total: r.total, hasMore: offset + r.items.length < r.total },
        };
      }),
    );
  }

  /** Runs a page statement; its rows, total, and what the page cache keeps it by. */
  async #read(q: { sql: string; params: string[] }, from: number, n: number) {
    const r = await this.#pool.query<PageRow>(q.sql, [from, n, ...q.params]);
    const first = r.rows[0];
    const items = r.rows.filter((x) => x.seq !== null).map(toStored);
    let validUntil = first?.until ?? Number.POSITIVE_INFINITY;
    let bytes = 64;
    for (const m of items) {
      if (first?.until === null) validUntil = Math.min(validUntil, m.expiresAt);
      bytes += m.bytes + 96;
    }
    return { items, total: first?.total ?? 0, version: first?.ver ?? -1, validUntil, bytes };
  }

  deleteMessages(f: MessageFilter): Promise<number> {
    return guarded(BACKEND, () =>
      inTransaction(this.#pool, async (client) => {
        if (f.conversationId === undefined && f.queryId === undefined) {
          // Every message: TRUNCATE, not a row-by-row DELETE. Writers take the conversations table
          // first, so locking it first keeps the lock order (and waits for writes in flight).
          await client.query('LOCK TABLE berth_conversations IN EXCLUSIVE MODE');
          const n = await client.query(
            `SELECT coalesce(sum(n), 0)::float8 AS n FROM berth_counters WHERE key = 'messages'`,
          );
          await client.query('TRUNCATE berth_messages, berth_message_counts');
          await client.query(`UPDATE berth_counters SET n = 0 WHERE key = 'messages'`);
          return Math.max(0, n.rows[0]?.n ?? 0);
        }
        const lock = lockConversationsSql(f);
        await client.query(lock.sql, lock.params);
        const params: unknown[] = [];
        const conds: string[] = [];
        if (f.conversationId !== undefined) conds.push(`conversation_id = $${params.push(f.conversationId)}`);
        if (f.queryId !== undefined) conds.push(`query_id = $${params.push(f.queryId)}`);
        const r = await client.query(deleteSql(conds.join(' AND ')), params);
        return r.rows[0]?.deleted ?? 0;
      }),
    );
  }

  createConversation(id?: string): Promise<{ conversation: ConversationInfo; created: boolean }> {
    return guarded(BACKEND, () => this.#convs.create(id));
  }

  conversations(cursor: number, limit: number): Promise<Page<ConversationInfo>> {
    return guarded(BACKEND, () => this.#convs.page(cursor, limit));
  }

  conversationIds(): Promise<string[]> {
    return guarded(BACKEND, () => this.#convs.ids());
  }

  conversation(id: string): Promise<ConversationInfo | undefined> {
    return guarded(BACKEND, () => this.#convs.get(id));
  }

  deleteConversation(id: string): Promise<{ messages: number } | undefined> {
    return guarded(BACKEND, () => this.#convs.remove(id));
  }

  deleteConversations(): Promise<{ conversations: number; messages: number }> {
    return guarded(BACKEND, () => this.#convs.removeAll());
  }

  status(): Promise<MemoryStatus> {
    return guarded(BACKEND, () => this.#convs.status());
  }

  async close(): Promise<void> {
    this.#messages?.close();
    this.#convs.close();
    await this.#opts.onClose?.();
  }
}
