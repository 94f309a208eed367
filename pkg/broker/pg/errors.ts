import { type HttpError, httpError } from '../../http/index.ts';

/** Seconds a client is told to wait (Retry-After) when a storage backend does not answer. */
export const RETRY_AFTER_SECONDS = 2;

/** Node socket errors and pg messages that mean "the server is not reachable right now". */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);
const NETWORK_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error',
  'Connection ended',
  'the database system is',
  'terminating connection',
  'Query read timeout',
];

/**
 * True when `err` says PostgreSQL is unreachable or restarting (as opposed to a bug in a query):
 * SQLSTATE class 08 (connection exception), 57P01-57P03 (shutdown, cannot connect now), 53300 (too
 * many connections), or a socket/pool error before any SQLSTATE exists.
 */
export function isUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code) || code.startsWith('08') || code === '53300') return true;
    if (code === '57P01' || code === '57P02' || code === '57P03') return true;
  }
  if (NETWORK_MESSAGES.some((m) => err.message.includes(m))) return true;
  const cause = (err as { cause?: unknown }).cause;
  return cause !== undefined && cause !== err && isUnavailable(cause);
}

/** Transient conflicts worth one more try: deadlock detected, serialization failure. */
export function isRetryable(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return code === '40P01' || code === '40001';
}

/**
 * The 503 a client gets while a backend is down: a clear message, `Retry-After`, and never the
 * driver's stack. Shared by the PostgreSQL and Redis stores (`backend` names which one).
 */
export function storageUnavailable(backend: string, cause?: unknown): HttpError {
  const why = cause instanceof Error ? `: ${firstLine(cause.message)}` : '';
  const err = httpError(
    'storage_unavailable',
    `${backend} is unavailable${why}; nothing was lost, retry after ${RETRY_AFTER_SECONDS} s`,
    { backend },
    { headers: { 'retry-after': String(RETRY_AFTER_SECONDS) } },
  );
  if (cause !== undefined) (err as { cause?: unknown }).cause = cause;
  return err;
}

/**
 * SQLSTATE class 22 (data exception) on a write is the request's own value PostgreSQL cannot hold —
 * a NUL character in a text (22P05/22021), a number out of range — which the in-memory backends
 * accept: a 400 naming it, not a 500.
 */
export function isDataException(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && code.startsWith('22');
}

/**
 * Runs a storage call: unreachable-server errors become the 503 above, deadlocks and serialization
 * failures are retried (up to 3 tries), values PostgreSQL cannot store a 400, anything else
 * propagates (a bug → 500 with the request id).
 */
export async function guarded<T>(backend: string, fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (isRetryable(err) && attempt < 3) continue;
      if (isUnavailable(err)) throw storageUnavailable(backend, err);
      if (isDataException(err))
        throw httpError(
          'invalid_request',
          `the request holds a value ${backend} cannot store: ${firstLine((err as Error).message)}`,
        );
      throw err;
    }
  }
}

function firstLine(s: string): string {
  const line = s.split('\n')[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
