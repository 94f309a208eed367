import { readFileSync } from 'node:fs';
import { Redis, type RedisOptions, ReplyError } from 'ioredis';
import { HttpError } from '../../http/index.ts';
import type { Logger } from '../../log/index.ts';

/** How to reach Redis: `REDIS_URL` plus the options a URL cannot carry. */
export interface RedisConnectionOptions {
  /** `redis://[user[:password]@]host[:port][/db]`, or `rediss://…` for TLS. */
  url: string;
  /** PEM file of the CA that signed the server's certificate (`rediss://` only; default: system CAs). */
  caFile?: string | undefined;
  /** A command without an answer for this long fails (→ 503) instead of hanging a request. Default 5000. */
  commandTimeoutMs?: number | undefined;
  /** Initial connection attempt timeout. Default 5000. */
  connectTimeoutMs?: number | undefined;
}

/** Seconds a client should wait before retrying a write the outage refused (sent as Retry-After). */
export const RETRY_AFTER_SECONDS = 2;

/** The chunk store cannot reach Redis: a 503 with `Retry-After`, rendered by the error handler. */
export class StorageUnavailableError extends HttpError {
  override name = 'StorageUnavailableError';
  readonly retryAfterSeconds = RETRY_AFTER_SECONDS;

  constructor(reason: string) {
    super(
      'storage_unavailable',
      `chunk storage (Redis) is unavailable: ${reason}; retry in ${RETRY_AFTER_SECONDS} s`,
      { backend: 'redis', retryAfterSeconds: RETRY_AFTER_SECONDS },
      { headers: { 'retry-after': String(RETRY_AFTER_SECONDS) } },
    );
  }
}

// Server answers that mean "not now" rather than "wrong request": loading the AOF after a restart,
// a replica that is read-only, memory full, a busy script, a cluster in failover.
const TRANSIENT = /^(LOADING|READONLY|OOM|BUSY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN|NOREPLICAS|MISCONF)\b/;

/**
 * What a failed command becomes: connection-level failures (refused, closed, timed out, offline
 * queue disabled, retries exhausted) and transient server states are a 503; other server errors
 * (a bug: wrong type, script error) stay as they are and surface as a logged 500.
 */
export function storageError(err: unknown): Error {
  if (err instanceof StorageUnavailableError) return err;
  const e = err instanceof Error ? err : new Error(String(err));
  if (e instanceof ReplyError && !TRANSIENT.test(e.message)) return e;
  return new StorageUnavailableError(e.message);
}

/** `host:port` of a URL with no credentials, for logs and health messages. */
export function redisTarget(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.hostname}:${u.port || 6379}`;
}

/** The retry delay ioredis waits before reconnecting: fast at first, then every 2 s. */
const retryStrategy = (times: number) => Math.min(50 * 2 ** Math.min(times, 6), 2000);

/**
 * ioredis options from the URL (parsed here, so user, password, db and TLS are explicit).
 * Why these choices:
 * - `enableOfflineQueue: false`: while disconnected a command fails at once (→ 503 with
 *   Retry-After) instead of waiting in an unbounded in-process queue that a client cannot see.
 * - `maxRetriesPerRequest: 0`: a command in flight when the connection drops is failed, not resent
 *   after the reconnect — the client got a 503 and retries it; a silent resend could store it twice.
 * - `commandTimeout`: a Redis that accepts the connection but does not answer fails requests too.
 * - `lazyConnect`: the store decides when to connect and waits for it (see `connect`).
 */
export function redisOptions(opts: RedisConnectionOptions, name: string): RedisOptions {
  const u = new URL(opts.url);
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:')
    throw new Error(`REDIS_URL must start with redis:// or rediss:// (got ${u.protocol}//)`);
  if (opts.caFile && u.protocol !== 'rediss:')
    throw new Error('a Redis CA file is only used with a rediss:// URL');
  const db = u.pathname.length > 1 ? Number(u.pathname.slice(1)) : 0;
  if (!Number.isInteger(db) || db < 0)
    throw new Error(`REDIS_URL: database "${u.pathname.slice(1)}" is not a number`);
  const options: RedisOptions = {
    host: u.hostname.replace(/^\[|\]$/g, ''),
    port: Number(u.port || 6379),
    db,
    connectionName: name,
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: opts.commandTimeoutMs ?? 5000,
    connectTimeout: opts.connectTimeoutMs ?? 5000,
    retryStrategy,
  };
  if (u.username) options.username = decodeURIComponent(u.username);
  if (u.password) options.password = decodeURIComponent(u.password);
  // The certificate is verified against the URL's host (name or IP SAN); a CA file replaces the
  // system CAs, for a cluster-internal CA.
  if (u.protocol === 'rediss:') options.tls = opts.caFile ? { ca: readFileSync(opts.caFile) } : {};
  return options;
}

/**
 * The dedicated connection of the blocking reader: a blocked connection serves nothing else, and
 * its command (XREAD BLOCK) must not be bounded by the normal command timeout. Its own deadline
 * (`blockingTimeout`, armed from the BLOCK argument plus a grace) stops a half-open socket from
 * hanging the reader forever; the reader loop itself re-issues reads after a reconnect.
 */
export function readerOptions(opts: RedisConnectionOptions, name: string): RedisOptions {
  const o = redisOptions(opts, name);
  delete o.commandTimeout;
  return { ...o, blockingTimeout: 1, blockingTimeoutGrace: 2000, autoResendUnfulfilledCommands: false };
}

export function createRedis(options: RedisOptions): Redis {
  return new Redis(options);
}

/**
 * Logs a connection's failures and recoveries once per change (ioredis emits an error per retry)
 * and keeps the last error for the health report. Without an `error` listener ioredis would print
 * every failed retry itself.
 */
export function reportConnection(
  conn: Redis,
  role: string,
  url: string,
  logger: Logger,
  state: { error?: string | undefined },
): void {
  const target = redisTarget(url);
  conn.on('error', (err: Error) => {
    if (state.error !== err.message)
      logger.warn({ target, role, err: err.message }, 'redis connection error');
    state.error = err.message;
  });
  conn.on('ready', () => {
    if (state.error) logger.info({ target, role }, 'redis connection ready');
    state.error = undefined;
  });
}
