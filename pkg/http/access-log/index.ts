import type { Context, Env, MiddlewareHandler } from 'hono';
import type { Logger } from '../../log/index.ts';

export interface AccessLogOptions<E extends Env> {
  /** Who made the request, for the line (a name, never a credential). */
  who?: (c: Context<E>) => Record<string, unknown>;
  /** At trace level, add the request headers (pkg/log redacts the credentials among them). */
  traceHeaders?: boolean;
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
        path: c.req.path,
        status: c.res.status,
        ms: Math.round((performance.now() - start) * 10) / 10,
        requestId: (c as unknown as Context).get('requestId'),
        ...opts.who?.(c),
        ...(opts.traceHeaders && logger.isLevelEnabled('trace') ? { headers: c.req.header() } : {}),
      },
      'request',
    );
  };
}
