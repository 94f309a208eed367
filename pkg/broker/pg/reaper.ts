import type pg from 'pg';
import type { Logger } from '../../log/index.ts';
import { inTransaction } from './client.ts';
import { LOCK_CLASS } from './locks.ts';
import { describe } from './notify.ts';

/** One kind of expired row to remove; `batch` deletes at most `limit` rows and returns how many. */
export interface ReapTask {
  name: string;
  /** Advisory lock id (locks.ts): one replica reaps a domain at a time. */
  lockId: number;
  batch(client: pg.PoolClient, limit: number): Promise<number>;
}

export interface ReaperOptions {
  pool: pg.Pool;
  logger: Logger;
  intervalMs?: number;
  batchSize?: number;
  /** Batches per task per round, so one round never holds a connection for long. */
  maxBatches?: number;
}

/**
 * Removes expired rows in batches. Reads already hide them (`expires_at > now()`), so reaping is
 * about space, not correctness. Safe with many replicas: each batch is a transaction that first
 * takes the domain's transaction-scoped advisory lock with pg_try_advisory_xact_lock — a replica
 * that does not get it skips the round (another one is on it) — and tasks pick victims with
 * `FOR UPDATE SKIP LOCKED`, so rows a client is deleting right now are left for the next round.
 * One reaper per domain at a time also keeps reapers from deadlocking on the counters they adjust.
 */
export class Reaper {
  readonly #o: Required<ReaperOptions>;
  readonly #tasks: ReapTask[] = [];
  #timer: NodeJS.Timeout | undefined;
  #round: Promise<unknown> | undefined;

  constructor(opts: ReaperOptions) {
    this.#o = {
      ...opts,
      intervalMs: opts.intervalMs ?? 30_000,
      batchSize: opts.batchSize ?? 1000,
      maxBatches: opts.maxBatches ?? 50,
    };
  }

  add(task: ReapTask): void {
    this.#tasks.push(task);
  }

  start(): void {
    this.#timer ??= setInterval(() => void this.runOnce(), this.#o.intervalMs);
    this.#timer.unref();
  }

  /** One round over every task; rows deleted per task (a round already running is joined). */
  runOnce(): Promise<Record<string, number>> {
    this.#round ??= this.#all().finally(() => {
      this.#round = undefined;
    });
    return this.#round as Promise<Record<string, number>>;
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#round?.catch(() => {});
  }

  async #all(): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const task of this.#tasks) {
      try {
        out[task.name] = await this.#reap(task);
        if (out[task.name])
          this.#o.logger.debug({ task: task.name, deleted: out[task.name] }, 'reaped expired rows');
      } catch (err) {
        out[task.name] = 0;
        this.#o.logger.warn(
          { err: describe(err), task: task.name },
          'reaping expired rows failed; next round retries',
        );
      }
    }
    return out;
  }

  async #reap(task: ReapTask): Promise<number> {
    let total = 0;
    for (let i = 0; i < this.#o.maxBatches; i++) {
      const n = await inTransaction(this.#o.pool, async (client) => {
        const lock = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock($1, $2) AS ok', [
          LOCK_CLASS,
          task.lockId,
        ]);
        return lock.rows[0]?.ok ? task.batch(client, this.#o.batchSize) : undefined;
      });
      if (n === undefined) return total;
      total += n;
      if (n < this.#o.batchSize) break;
    }
    return total;
  }
}
