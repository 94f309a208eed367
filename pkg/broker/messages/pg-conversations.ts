import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { Page } from '../core/seq-deque.ts';
import { CHANNELS, type Feed, inTransaction, type PgBackend } from '../pg/index.ts';
import {
  CONVERSATION_COLUMNS,
  type ConversationRow,
  CREATE_CONVERSATION,
  DELETE_CONVERSATION,
  toInfo,
} from './pg-sql.ts';
import type { ConversationInfo, MemoryStatus } from './types.ts';

type FeedConversation = ConversationInfo & { seq: number };

const LIST = `SELECT ${CONVERSATION_COLUMNS} FROM berth_conversations c`;

/**
 * The conversations half of the PostgreSQL message store: their own sequence and feed (watchers of
 * `/conversations` on every replica see every creation), counts kept on write by the message SQL.
 * Callers wrap each call in `guarded` (the store does).
 */
export class PgConversations {
  readonly #pool: pg.Pool;
  readonly #listeners: Array<(c: ConversationInfo) => void> = [];
  #feed: Feed<FeedConversation> | undefined;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async init(backend: PgBackend): Promise<void> {
    this.#feed = await backend.feed<FeedConversation>(CHANNELS.conversations, {
      name: 'conversations',
      read: async (after, limit) =>
        (
          await this.#pool.query<ConversationRow>(`${LIST} WHERE seq > $1 ORDER BY seq LIMIT $2`, [
            after,
            limit,
          ])
        ).rows.map((r) => ({ ...toInfo(r), seq: r.seq })),
      start: async () =>
        Number(
          (await this.#pool.query('SELECT coalesce(max(seq), 0)::float8 AS s FROM berth_conversations'))
            .rows[0]?.s,
        ),
      deliver: ({ seq: _, ...c }) => {
        for (const l of this.#listeners) l(c);
      },
    });
  }

  head(): number {
    return this.#feed?.head() ?? 0;
  }

  committedHead(): Promise<number> {
    return this.#feed?.committed() ?? Promise.resolve(0);
  }

  onCreate(listener: (c: ConversationInfo) => void): void {
    this.#listeners.push(listener);
  }

  /** A conversation this process just created (committed): announce it without a read. */
  created(c: ConversationInfo): Promise<void> {
    this.#feed?.local([{ ...c, seq: c.sequence }]);
    return this.#feed?.settle(c.sequence) ?? Promise.resolve();
  }

  async create(id?: string): Promise<{ conversation: ConversationInfo; created: boolean }> {
    const convId = id ?? randomUUID();
    const r = await this.#pool.query<ConversationRow>(CREATE_CONVERSATION, [
      convId,
      new Date().toISOString(),
    ]);
    const row = r.rows[0];
    if (row) {
      const conversation = toInfo(row);
      await this.created(conversation);
      return { conversation, created: true };
    }
    const existing = await this.get(convId);
    if (existing) return { conversation: existing, created: false };
    return this.create(convId); // deleted in between: create it again
  }

  async page(cursor: number, limit: number): Promise<Page<ConversationInfo>> {
    const [rows, total] = await Promise.all([
      this.#pool.query<ConversationRow>(`${LIST} WHERE seq > $1 ORDER BY seq LIMIT $2`, [cursor, limit + 1]),
      counter(this.#pool, 'conversations'),
    ]);
    const items = rows.rows.map(toInfo);
    const hasMore = items.length > limit;
    return { items: hasMore ? items.slice(0, limit) : items, total, hasMore };
  }

  async ids(): Promise<string[]> {
    const r = await this.#pool.query<{ id: string }>('SELECT id FROM berth_conversations ORDER BY seq');
    return r.rows.map((x) => x.id);
  }

  async get(id: string): Promise<ConversationInfo | undefined> {
    const r = await this.#pool.query<ConversationRow>(`${LIST} WHERE id = $1`, [id]);
    return r.rows[0] && toInfo(r.rows[0]);
  }

  /**
   * Deletes one conversation; the FK cascades to its messages and counts. The row is locked first
   * (appends in flight finish, new ones wait), so the counts subtracted are exact.
   */
  remove(id: string): Promise<{ messages: number } | undefined> {
    return inTransaction(this.#pool, async (client) => {
      const locked = await client.query('SELECT id FROM berth_conversations WHERE id = $1 FOR UPDATE', [id]);
      if (!locked.rows.length) return undefined;
      const r = await client.query<{ n: number }>(DELETE_CONVERSATION, [id]);
      return { messages: r.rows[0]?.n ?? 0 };
    });
  }

  /** Every conversation and message: TRUNCATE under the conversations lock (the lock order's first). */
  removeAll(): Promise<{ conversations: number; messages: number }> {
    return inTransaction(this.#pool, async (client) => {
      await client.query('LOCK TABLE berth_conversations IN ACCESS EXCLUSIVE MODE');
      const r = await client.query<{ c: number; m: number }>(
        `SELECT (SELECT count(*) FROM berth_conversations)::float8 AS c,
           (SELECT coalesce(sum(n), 0) FROM berth_counters WHERE key = 'messages')::float8 AS m`,
      );
      await client.query('TRUNCATE berth_conversations, berth_messages, berth_message_counts');
      await client.query(`UPDATE berth_counters SET n = 0 WHERE key IN ('messages', 'conversations')`);
      return { conversations: r.rows[0]?.c ?? 0, messages: Math.max(0, r.rows[0]?.m ?? 0) };
    });
  }

  async status(): Promise<MemoryStatus> {
    const [rows, total] = await Promise.all([
      this.#pool.query<ConversationRow>(`${LIST} ORDER BY seq`),
      counter(this.#pool, 'messages'),
    ]);
    const conversations: MemoryStatus['conversations'] = {};
    for (const r of rows.rows)
      conversations[r.id] = { message_count: r.message_count, query_count: r.query_count };
    return { total_conversations: rows.rows.length, total_messages: total, conversations };
  }

  close(): void {
    this.#feed?.close();
  }
}

/** A sharded counter's value (never below 0: decrements of a purge race may overshoot briefly). */
export async function counter(pool: pg.Pool, key: string): Promise<number> {
  const r = await pool.query('SELECT coalesce(sum(n), 0)::float8 AS n FROM berth_counters WHERE key = $1', [
    key,
  ]);
  return Math.max(0, r.rows[0]?.n ?? 0);
}
