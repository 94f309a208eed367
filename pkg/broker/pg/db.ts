import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import type { Logger } from '../../log/index.ts';
import * as schema from './schema/index.ts';

export type Db = NodePgDatabase<typeof schema>;

export interface DatabaseOptions {
  url: string;
  /** Connections per process (DATABASE_POOL_SIZE). */
  poolSize?: number;
  /** How long a request waits for a connection before it is answered 503 (ms). */
  connectTimeoutMs?: number;
  /** Server-side cap of one statement (ms); a stuck query must not hold a request forever. */
  statementTimeoutMs?: number;
  logger: Logger;
}

export interface Database {
  pool: pg.Pool;
  /**
   * The group-commit writers' connection (one batch at a time needs one): generic plans for its
   * prepared statements (see WRITER_SESSION).
   */
  writer: pg.Pool;
  db: Db;
  /** The URL without credentials, for logs and messages. */
  safeUrl: string;
  /** Options to open more connections like the pool's (the LISTEN client needs its own). */
  clientConfig: pg.ClientConfig;
  /** `SELECT 1` within `timeoutMs`; the readiness probe. */
  probe(timeoutMs?: number): Promise<{ ok: boolean; message?: string }>;
  close(): Promise<void>;
}

/** postgres://user:secret@host/db → postgres://user@host/db: passwords never reach a log line. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    u.password = '';
    for (const k of [...u.searchParams.keys()])
      if (/pass|secret|key/i.test(k)) u.searchParams.set(k, 'REDACTED');
    return u.toString();
  } catch {
    return '<unparseable DATABASE_URL>';
  }
}

/**
 * Session settings of the writer connection. The group-commit statements (a batch of appends as
 * one multi-CTE statement) are prepared once, but PostgreSQL's default plan cache mode re-plans
 * them at every execution: a custom plan knows each array's length and so always looks cheaper
 * than the generic one. Planning that statement cost more than running it — a 24-append batch
 * 1.82–2.33 ms with custom plans against 1.06–1.22 ms generic, one append 1.11–1.21 against
 * 0.32–0.56 ms (docs/broker.md). The reads stay on the main pool, where a custom plan for the
 * parameters given is the better default.
 */
const WRITER_SESSION = 'SET plan_cache_mode = force_generic_plan';

/**
 * One pool per process (and a drizzle handle over it), plus the writer connection. An idle pooled
 * client whose server went away makes its pool emit 'error'; unhandled, that would kill the
 * process, so it is logged and the client dropped — the next request gets a fresh connection or a 503.
 */
export function openDatabase(opts: DatabaseOptions): Database {
  const clientConfig: pg.ClientConfig = {
    connectionString: opts.url,
    connectionTimeoutMillis: opts.connectTimeoutMs ?? 5000,
    keepAlive: true,
    application_name: 'berth-broker',
    statement_timeout: opts.statementTimeoutMs ?? 30_000,
  };
  const safeUrl = redactUrl(opts.url);
  let lastLogged = 0;
  const onIdleError = (err: Error) => {
    // One line per outage burst, not one per dropped idle connection.
    if (Date.now() - lastLogged < 5000) return;
    lastLogged = Date.now();
    opts.logger.warn(
      { err: { message: err.message, code: (err as { code?: string }).code }, db: safeUrl },
      'idle PostgreSQL connection lost',
    );
  };
  const pool = new pg.Pool({ ...clientConfig, max: opts.poolSize ?? 10, idleTimeoutMillis: 30_000 });
  pool.on('error', onIdleError);
  const writer = new pg.Pool({
    ...clientConfig,
    application_name: 'berth-broker-writer',
    max: 1,
    idleTimeoutMillis: 30_000,
  });
  writer.on('error', onIdleError);
  // Queued before anything else the new connection runs (a client runs its queries in order). The
  // setting only saves planning: where it fails (a server before PostgreSQL 12), the writer works
  // with the default plans; a connection lost meanwhile fails the next query as usual.
  writer.on('connect', (client) => {
    client.query(WRITER_SESSION).catch(() => {});
  });
  const db = drizzle(pool, { schema });
  return {
    pool,
    writer,
    db,
    safeUrl,
    clientConfig,
    async probe(timeoutMs = 2000) {
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          pool.query('SELECT 1'),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
          }),
        ]);
        return { ok: true };
      } catch (err) {
        return { ok: false, message: err instanceof Error ? err.message : String(err) };
      } finally {
        clearTimeout(timer);
      }
    },
    close: async () => {
      await Promise.all([pool.end(), writer.end()]);
    },
  };
}

/**
 * Checks a connection out of the pool for `fn`. A checked-out pg client has no 'error' listener
 * (pg-pool removes its idle one), and a server that goes away between two of our queries would make
 * it emit an unhandled 'error' and crash the process: one is attached for as long as we hold it.
 * The query in flight fails on its own; the connection is then destroyed instead of returned.
 */
export async function withClient<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: unknown;
  const onError = (err: unknown) => {
    broken = err;
  };
  client.on('error', onError);
  try {
    const out = await fn(client);
    client.removeListener('error', onError);
    client.release(broken ? true : undefined);
    return out;
  } catch (err) {
    client.removeListener('error', onError);
    client.release(true);
    throw err;
  }
}

/** Where a statement runs: the pool, or a client inside the caller's transaction. */
export type Queryable = pg.Pool | pg.PoolClient;

/** Runs `fn` in a transaction on one pooled connection (see withClient); ROLLBACK on failure. */
export function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return withClient(pool, async (client) => {
    await client.query('BEGIN');
    try {
      const out = await fn(client);
      await client.query('COMMIT');
      return out;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    }
  });
}
