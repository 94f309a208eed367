import type { Context, Env, MiddlewareHandler } from 'hono';
import { capString, type Logger } from '../../log/index.ts';

export interface AccessLogOptions<E extends Env> {
  /** Who made the request, for the line (a name, never a credential). */
  who?: (c: Context<E>) => Record<string, unknown>;
  /** At trace level, add the request headers (pkg/log redacts the credentials among them). */
  traceHeaders?: boolean;
}

/**
 * What a log line keeps of a client-chosen text (a path, a header name or value): a request line may
 * be 16 KB and headers as many, and a line per request must not be (pkg/log would cut a string only
 * at 64 KiB, and scan all of it).
 */
export const LOGGED_TEXT_CHARS = 1024;
const LOGGED_HEADERS = 64;

export const loggedText = (text: string): string => capString(text, LOGGED_TEXT_CHARS);

/** The request headers for a trace line: the first 64, names and values cut to 1 KiB. */
export function loggedHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  let n = 0;
  for (const [name, value] of headers) {
    if (n++ === LOGGED_HEADERS) {
      out['…'] = '[more headers]';
      break;
    }
    out[loggedText(name)] = loggedText(value);
  }
  return out;
}

/** One debug line per request, after it is answered; costs nothing when debug is off. */
export function accessLog<E extends Env>(
  logger: Logger,
  opts: AccessLogOptions<E> = {},
): MiddlewareHandler<E> {
  return async (c, next) => {
    if (!logger.isLevelEnabled('debug')) return next();
    const start = performance.now();
    await next();
    logger.debug(
      {
        method: c.req.method,
        path: loggedText(c.req.path),
        status: c.res.status,
        ms: Math.round((performance.now() - start) * 10) / 10,
        requestId: (c as unknown as Context).get('requestId'),
        ...opts.who?.(c),
        ...(opts.traceHeaders && logger.isLevelEnabled('trace')
          ? { headers: loggedHeaders(c.req.raw.headers) }
          : {}),
      },
      'request',
    );
  };
}
