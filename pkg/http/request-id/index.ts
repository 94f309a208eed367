import { randomUUID } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';

export const REQUEST_ID_HEADER = 'x-request-id';
// A caller's id is kept only when it is short and printable: it lands in logs and response headers.
const ACCEPTABLE = /^[\w.:@/+=-]{1,128}$/;

/** Takes `x-request-id` from the request (or makes one), exposes it as `requestId`, echoes it back. */
export function requestId(): MiddlewareHandler {
  return async (c, next) => {
    const given = c.req.header(REQUEST_ID_HEADER);
    const id = given && ACCEPTABLE.test(given) ? given : randomUUID();
    c.set('requestId' as never, id as never);
    c.header(REQUEST_ID_HEADER, id);
    await next();
  };
}

export function requestIdOf(c: Context): string | undefined {
  return (c.get('requestId' as never) as string | undefined) ?? c.req.header(REQUEST_ID_HEADER);
}
