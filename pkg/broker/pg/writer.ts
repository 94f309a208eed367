import pg from 'pg';
import { transactionOn, withClient } from './client.ts';

/**
 * Session setting of the writer connection. The group-commit statements (a batch of appends as one
 * multi-CTE statement) are prepared once, but PostgreSQL's default plan cache mode re-plans them at
 * every execution: a custom plan knows each array's length and so always looks cheaper than the
 * generic one, and planning that statement cost more than running it — a 24-append batch
 * 1.82–2.33 ms with custom plans against 1.06–1.22 ms generic, one append 1.11–1.21 against
 * 0.32–0.56 ms (docs/broker.md). Reads stay on the main pool, where a plan for the parameters given
 * is the better default.
 */
const WRITER_SESSION = 'SET plan_cache_mode = force_generic_plan';

/**
 * How old the writer's plans may get. A generic plan is kept for the connection's life, and one
 * made while `berth_conversations` was nearly empty scans it whole: 300k conversations inserted
 * after the plan was made took a batch from 1.8 to 127–174 ms until an ANALYZE (custom plans follow
 * the table's physical size at once). `DISCARD PLANS` this often makes the plans again from the
 * current size, so such a plan lives 5 s at most, for one re-plan (~1 ms) per 5 s.
 */
const REPLAN_MS = 5000;

/**
 * The connection POST /messages batches are written on: one, since one batch is written at a time
 * (pg-append.ts), in a pool of its own so that it can carry its own session setting. Each new
 * connection runs WRITER_SESSION before its first statement, and `DISCARD PLANS` every `replanMs`
 * (both awaited: node-postgres is deprecating queries queued on a busy client).
 */
export class Writer {
  readonly #pool: pg.Pool;
  readonly #replanMs: number;
  /** When each connection's plans were last (re)set. */
  readonly #plannedAt = new WeakMap<pg.PoolClient, number>();

  constructor(clientConfig: pg.ClientConfig, onIdleError: (err: Error) => void, replanMs = REPLAN_MS) {
    this.#replanMs = replanMs;
    this.#pool = new pg.Pool({
      ...clientConfig,
      application_name: 'berth-broker-writer',
      max: 1,
      idleTimeoutMillis: 30_000,
    });
    this.#pool.on('error', onIdleError);
  }

  /** Runs `fn` on the writer connection (see withClient for a connection lost meanwhile). */
  run<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return withClient(this.#pool, async (client) => {
      await this.#freshPlans(client);
      return fn(client);
    });
  }

  async #freshPlans(client: pg.PoolClient): Promise<void> {
    const now = performance.now();
    const at = this.#plannedAt.get(client);
    if (at !== undefined && now - at < this.#replanMs) return;
    this.#plannedAt.set(client, now);
    // Only planning is at stake: where the setting fails (a server before PostgreSQL 12) the
    // writer goes on with default plans; a lost connection fails `fn`'s statement anyway.
    await client.query(at === undefined ? WRITER_SESSION : 'DISCARD PLANS').catch(() => {});
  }

  /** Runs `fn` in a transaction on the writer connection; ROLLBACK on failure. */
  transaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.run((client) => transactionOn(client, fn));
  }

  close(): Promise<void> {
    return this.#pool.end();
  }
}
