import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import type { Logger } from '../../log/index.ts';
import * as schema from './schema/index.ts';
import { Writer } from './writer.ts';

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
  /** The connection the group-committed POST /messages batches are written on (writer.ts). */
  writer: Writer;
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
  const writer = new Writer(clientConfig, onIdleError);
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
      await Promise.all([pool.end(), writer.close()]);
    },
  };
}
