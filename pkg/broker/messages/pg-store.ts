import type pg from 'pg';
import type { z } from 'zod';
import type { Page } from '../core/seq-deque.ts';
import { CHANNELS, type Feed, guarded, inTransaction, LOCKS, type PgBackend } from '../pg/index.ts';
import { AppendBatcher } from './pg-append.ts';
import { PgConversations } from './pg-conversations.ts';
import {
  deleteSql,
  FEED_READ,
  FEED_START,
  lockConversationsSql,
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
  /**
   * Session roll-up inside the append's transaction (sessions on PostgreSQL too): atomic with the
   * insert; the returned function runs after COMMIT.
   */
  rollup?: ((client: pg.PoolClient, rows: StoredMessage[], at: string) => Promise<() => void>) | undefined;
}

const BACKEND = 'postgres';

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
  #messages: Feed<StoredMessage> | undefined;

  constructor(backend: PgBackend, opts: PgMessageStoreOptions) {
    this.#backend = backend;
    this.#pool = backend.database.pool;
    this.#opts = opts;
    this.#convs = new PgConversations(this.#pool);
    this.#appends = new AppendBatcher(this.#pool, opts.defaultTtlSeconds, opts.rollup);
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
    const last = rows.at(-1);
    if (last) this.#backend.announce(CHANNELS.messages, last.seq);
    if (last && this.#messages) {
      this.#messages.local(rows);
      // Resolve after this process's listeners saw the rows (bounded: the write is committed anyway).
      await this.#messages.settle(last.seq);
    }
    return rows;
  }

  page(f: MessageFilter, cursor: number, limit: number): Promise<Page<StoredMessage>> {
    return guarded(BACKEND, async () => {
      const q = pageSql(f, 'cursor');
      const r = await this.#pool.query<MessageRow & { total: number }>(q.sql, [
        cursor,
        limit + 1,
        ...q.params,
      ]);
      const items = r.rows.filter((x) => x.seq !== null).map(toStored);
      const hasMore = items.length > limit;
      return { items: hasMore ? items.slice(0, limit) : items, total: r.rows[0]?.total ?? 0, hasMore };
    });
  }

  slice(f: MessageFilter, offset: number, limit: number): Promise<{ items: StoredMessage[]; total: number }> {
    return guarded(BACKEND, async () => {
      const q = pageSql(f, 'offset');
      const r = await this.#pool.query<MessageRow & { total: number }>(q.sql, [offset, limit, ...q.params]);
      return { items: r.rows.filter((x) => x.seq !== null).map(toStored), total: r.rows[0]?.total ?? 0 };
    });
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
