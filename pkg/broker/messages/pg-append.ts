import type pg from 'pg';
import type { z } from 'zod';
import { guarded, type Writer } from '../pg/index.ts';
import { APPEND_BATCH, ENSURE_CONVERSATIONS, INSERT_MESSAGES } from './pg-batch-sql.ts';
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
 * Group commit for POST /messages: the appends that arrive while a batch is being written are
 * written together in the next one. Every commit waits for a WAL flush; one batch pays it once.
 *
 * Without a session roll-up a batch is one statement (APPEND_BATCH, committed on its own); with the
 * roll-up (sessions in PostgreSQL) it is a transaction that also updates its session's row. Either
 * way one batch is written at a time. Two statements at once on two connections (they share no row,
 * and the feed orders their commits) measured slower on 2 cores, broker, PostgreSQL and the load
 * generator sharing them: the second connection mostly carried batches of one append that had
 * arrived just after the first left (72 of 128 batches in a 0.5 s trace), each paying a statement,
 * while one at a time lets everything that queues during a round trip go in the next batch — at c=50
 * from a fresh broker 5,127–7,094 req/s (mean 6,056) against 4,771–6,019 (mean 5,480) with two,
 * five alternating runs each (docs/broker.md); 3 and 4 at once were slower still. With the roll-up
 * a second transaction would only wait on the session row the first holds until its commit. A batch
 * that fails is retried one append at a time, so one bad append fails alone.
 */
export class AppendBatcher {
  readonly #writer: Writer;
  readonly #ttl: number;
  readonly #rollup: Rollup | undefined;
  readonly #queue: Pending[] = [];
  #inFlight = false;

  constructor(writer: Writer, defaultTtlSeconds: number, rollup: Rollup | undefined) {
    this.#writer = writer;
    this.#ttl = defaultTtlSeconds;
    this.#rollup = rollup;
  }

  append(input: Input): Promise<Appended> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ input, at: new Date().toISOString(), resolve, reject });
      this.#pump();
    });
  }

  #pump(): void {
    if (!this.#queue.length || this.#inFlight) return;
    this.#inFlight = true;
    void this.#commit(this.#queue.splice(0, MAX_BATCH)).finally(() => {
      this.#inFlight = false;
      this.#pump();
    });
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
   * Writes the batch. A conversation deleted by another transaction after the batch saw it (read
   * committed: each statement its own snapshot) fails the message insert's foreign key; the write
   * is then run again and creates the conversation anew — as if the append had come after the delete.
   */
  #write(batch: Pending[]): Promise<{ results: Appended[]; after: (() => void) | undefined }> {
    return guarded('postgres', async () => {
      for (let attempt = 1; ; attempt++) {
        try {
          return this.#rollup ? await this.#transaction(batch, this.#rollup) : await this.#statement(batch);
        } catch (err) {
          if (!isForeignKeyViolation(err) || attempt >= 3) throw err;
        }
      }
    });
  }

  /** The batch as one statement (no roll-up). */
  async #statement(batch: Pending[]): Promise<{ results: Appended[]; after: undefined }> {
    // Named: parsed once per connection, and planned generically on the writer connection (writer.ts).
    const r = await this.#writer.run((client) =>
      client.query<MessageRow & { kind: 'c' | 'm' }>({
        name: 'berth_append_batch',
        text: APPEND_BATCH,
        values: [...this.#conversations(batch), ...this.#columns(batch)],
      }),
    );
    const created = new Map<string, Conv>();
    const rows: StoredMessage[] = [];
    for (const row of r.rows)
      if (row.kind === 'm') rows.push(toStored(row));
      else created.set(row.conversation_id, { seq: Number(row.seq), created_at: new Date(row.json) });
    return { results: this.#split(batch, rows, created), after: undefined };
  }

  /** The batch and its session roll-up in one transaction. */
  #transaction(batch: Pending[], rollup: Rollup) {
    return this.#writer.transaction(async (client) => {
      const created = await this.#ensure(client, batch);
      const rows = await this.#insert(client, batch);
      const results = this.#split(batch, rows, created);
      const at = (batch.at(-1) as Pending).at;
      const after = rows.length ? await rollup(client, rows, at) : undefined;
      return { results, after };
    });
  }

  /** The conversations of the batch this transaction created, by id. */
  async #ensure(client: pg.PoolClient, batch: Pending[]): Promise<Map<string, Conv>> {
    const r = await client.query<Conv & { id: string }>({
      name: 'berth_ensure_conversations',
      text: ENSURE_CONVERSATIONS,
      values: this.#conversations(batch),
    });
    return new Map(r.rows.map((c) => [c.id, { seq: c.seq, created_at: c.created_at }]));
  }

  async #insert(client: pg.PoolClient, batch: Pending[]): Promise<StoredMessage[]> {
    const cols = this.#columns(batch);
    if (!cols[4].length) return [];
    const r = await client.query<MessageRow>({
      name: 'berth_insert_messages',
      text: INSERT_MESSAGES,
      values: cols,
    });
    return r.rows.map(toStored);
  }

  /** The batch's conversation ids in first-appearance order, and the time of the append naming each first. */
  #conversations(batch: Pending[]): [string[], string[]] {
    const first = new Map<string, string>();
    for (const p of batch) if (!first.has(p.input.conversation_id)) first.set(p.input.conversation_id, p.at);
    return [[...first.keys()], [...first.values()]];
  }

  /** One element per message: conversation, query, receive time, ttl, and the record's tail. */
  #columns(batch: Pending[]): [string[], string[], string[], number[], string[]] {
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
    return cols;
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
