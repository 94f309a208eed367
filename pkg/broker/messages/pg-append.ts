import type pg from 'pg';
import type { z } from 'zod';
import { guarded, inTransaction } from '../pg/index.ts';
import { ENSURE_CONVERSATIONS, INSERT_MESSAGES } from './pg-batch-sql.ts';
import { type MessageRow, toStored } from './pg-sql.ts';
import { recordTail } from './record-json.ts';
import type { messagesBody, StoredMessage } from './types.ts';

type Input = z.output<typeof messagesBody>;
type Rollup = (client: pg.PoolClient, rows: StoredMessage[], at: string) => Promise<() => void>;

/** What one POST stored: its rows, and its conversation when this POST created it. */
export interface Appended {
  rows: StoredMessage[];
  conv?: Conv | undefined;
}

interface Conv {
  seq: number;
  created_at: Date;
}

interface Pending {
  input: Input;
  at: string;
  resolve(a: Appended): void;
  reject(err: unknown): void;
}

/** Appends per transaction at most; beyond it the next transaction takes the rest. */
const MAX_BATCH = 256;

/**
 * Group commit for POST /messages: the appends that arrive while a transaction runs are written
 * together in the next one. Every append of a query updates the same session row (the roll-up) and
 * every commit waits for a WAL flush, so one transaction per POST serialized concurrent writers on
 * that row at one flush each; one transaction per batch pays the row lock and the flush once, and
 * two statements write the whole batch (pg-batch-sql.ts). One transaction at a time: with two or
 * more in flight the later ones only wait on the session row the first holds until its commit
 * (measured slower: 2,300 → 1,800 req/s). A batch that fails is retried one append at a time, so
 * one bad append fails alone.
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

  /**
   * One transaction for the batch. A conversation deleted by another transaction after `#ensure`
   * saw it (read committed: each statement its own snapshot) fails the message insert's foreign
   * key; the transaction is then run again, and `#ensure` creates the conversation anew — as if the
   * append had come after the delete.
   */
  #write(batch: Pending[]): Promise<{ results: Appended[]; after: (() => void) | undefined }> {
    return guarded('postgres', async () => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await inTransaction(this.#pool, async (client) => {
            const created = await this.#ensure(client, batch);
            const rows = await this.#insert(client, batch);
            const results = this.#split(batch, rows, created);
            const at = (batch.at(-1) as Pending).at;
            const after = rows.length ? await this.#rollup?.(client, rows, at) : undefined;
            return { results, after };
          });
        } catch (err) {
          if (!isForeignKeyViolation(err) || attempt >= 3) throw err;
        }
      }
    });
  }

  /** The conversations of the batch this transaction created, by id. */
  async #ensure(client: pg.PoolClient, batch: Pending[]): Promise<Map<string, Conv>> {
    const first = new Map<string, string>();
    for (const p of batch) if (!first.has(p.input.conversation_id)) first.set(p.input.conversation_id, p.at);
    const r = await client.query<Conv & { id: string }>(ENSURE_CONVERSATIONS, [
      [...first.keys()],
      [...first.values()],
    ]);
    return new Map(r.rows.map((c) => [c.id, { seq: c.seq, created_at: c.created_at }]));
  }

  async #insert(client: pg.PoolClient, batch: Pending[]): Promise<StoredMessage[]> {
    const cols: [string[], string[], string[], number[], string[]] = [[], [], [], [], []];
    for (const { input, at } of batch) {
      const ttl = input.ttl_seconds ?? this.#ttl;
      const tail = recordTail(at, input.conversation_id, input.query_id);
      for (const message of input.messages) {
        cols[0].push(input.conversation_id);
        cols[1].push(input.query_id);
        cols[2].push(at);
        cols[3].push(ttl);
        // The stored record is `{"sequence":N,` + this, so the body is serialized once, here.
        cols[4].push(tail(message));
      }
    }
    if (!cols[4].length) return [];
    return (await client.query<MessageRow>(INSERT_MESSAGES, cols)).rows.map(toStored);
  }

  /** Each append's rows (sequence order is input order) and, for the first append naming it, its new conversation. */
  #split(batch: Pending[], rows: StoredMessage[], created: Map<string, Conv>): Appended[] {
    let from = 0;
    return batch.map(({ input }) => {
      const conv = created.get(input.conversation_id);
      created.delete(input.conversation_id);
      const to = from + input.messages.length;
      const mine = rows.slice(from, to);
      from = to;
      return { rows: mine, conv };
    });
  }
}

/** SQLSTATE 23503: a row refers to one that is not there (here: a conversation deleted meanwhile). */
function isForeignKeyViolation(err: unknown): boolean {
  return (err as { code?: unknown } | undefined)?.code === '23503';
}
