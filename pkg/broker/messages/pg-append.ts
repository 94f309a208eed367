import type pg from 'pg';
import type { z } from 'zod';
import { guarded, inTransaction } from '../pg/index.ts';
import {
  BUMP_CONVERSATIONS,
  ENSURE_CONVERSATION,
  INSERT_MESSAGES,
  type MessageRow,
  toStored,
} from './pg-sql.ts';
import type { messagesBody, StoredMessage } from './types.ts';

type Input = z.output<typeof messagesBody>;
type Rollup = (client: pg.PoolClient, rows: StoredMessage[], at: string) => Promise<() => void>;

/** What one POST stored: its rows, and its conversation when this POST created it. */
export interface Appended {
  rows: StoredMessage[];
  conv?: { seq: number; created_at: Date } | undefined;
}

interface Pending {
  input: Input;
  at: string;
  resolve(a: Appended): void;
  reject(err: unknown): void;
}

/** Appends per transaction at most; beyond it the next transaction takes the rest. */
const MAX_BATCH = 64;

/**
 * Group commit for POST /messages: the appends that arrive while a transaction runs are written
 * together in the next one. Every append of a query updates the same session row (the roll-up) and
 * every commit waits for a WAL flush, so one transaction per POST serialized concurrent writers on
 * that row at one flush each; one transaction per batch pays the row lock and the flush once. A
 * batch that fails is retried one append at a time, so one bad append fails alone.
 */
export class AppendBatcher {
  readonly #pool: pg.Pool;
  readonly #ttl: number;
  readonly #rollup: Rollup | undefined;
  readonly #queue: Pending[] = [];
  #draining = false;

  constructor(pool: pg.Pool, defaultTtlSeconds: number, rollup: Rollup | undefined) {
    this.#pool = pool;
    this.#ttl = defaultTtlSeconds;
    this.#rollup = rollup;
  }

  append(input: Input): Promise<Appended> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ input, at: new Date().toISOString(), resolve, reject });
      if (!this.#draining) void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#draining = true;
    try {
      while (this.#queue.length) await this.#commit(this.#queue.splice(0, MAX_BATCH));
    } finally {
      this.#draining = false;
    }
  }

  async #commit(batch: Pending[]): Promise<void> {
    try {
      const { results, after } = await this.#write(batch);
      after?.();
      for (const [i, p] of batch.entries()) p.resolve(results[i] as Appended);
    } catch (err) {
      if (batch.length === 1) (batch[0] as Pending).reject(err);
      else for (const p of batch) await this.#commit([p]);
    }
  }

  #write(batch: Pending[]): Promise<{ results: Appended[]; after: (() => void) | undefined }> {
    return guarded('postgres', () =>
      inTransaction(this.#pool, async (client) => {
        const results: Appended[] = [];
        for (const p of batch) results.push(await this.#one(client, p));
        const rows = results.flatMap((r) => r.rows);
        const at = (batch.at(-1) as Pending).at;
        const after = rows.length ? await this.#rollup?.(client, rows, at) : undefined;
        return { results, after };
      }),
    );
  }

  async #one(client: pg.PoolClient, { input, at }: Pending): Promise<Appended> {
    const ensured = await client.query(ENSURE_CONVERSATION, [input.conversation_id, at]);
    const conv = ensured.rows[0] as Appended['conv'];
    if (!input.messages.length) {
      if (conv) await client.query(BUMP_CONVERSATIONS, [conv.seq]);
      return { rows: [], conv };
    }
    const bodies = input.messages.map((message) =>
      JSON.stringify({
        timestamp: at,
        conversation_id: input.conversation_id,
        query_id: input.query_id,
        message,
      }).slice(1),
    );
    const r = await client.query<MessageRow>(INSERT_MESSAGES, [
      input.conversation_id,
      input.query_id,
      at,
      input.ttl_seconds ?? this.#ttl,
      bodies,
      conv ? 1 : 0,
      conv?.seq ?? 0,
    ]);
    return { rows: r.rows.map(toStored), conv };
  }
}
