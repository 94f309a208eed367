import { randomUUID } from 'node:crypto';
import type { HttpBindings } from '@hono/node-server';
import type { Context, MiddlewareHandler } from 'hono';

/** What `requestId()` sets on an app's context. */
export type RequestIdVariables = {
  /** This request's id: the caller's `x-request-id` when acceptable, else a fresh UUID. */
  requestId: string;
};

export const REQUEST_ID_HEADER = 'x-request-id';
// A caller's id is kept only when it is short and printable: it lands in logs and response headers.
const ACCEPTABLE = /^[\w.:@/+=-]{1,128}$/;

/**
 * Takes `x-request-id` from the request (or makes one), exposes it as `requestId`, echoes it back.
 * On a Node server the header goes straight onto the outgoing response, which writes it with
 * whatever the handler answers (streams included): set through Hono, it gave every response a web
 * `Headers` object to build and convert, ~15 % of a short request's time (POST /messages of the
 * broker: 16.8k → 20k req/s without it, docs/broker.md).
 */
export function requestId(): MiddlewareHandler<{ Variables: RequestIdVariables }> {
  return async (c, next) => {
    const id = acceptedRequestId(c.req.header(REQUEST_ID_HEADER));
    c.set('requestId', id);
    const outgoing = (c.env as Partial<HttpBindings> | undefined)?.outgoing;
    if (outgoing && typeof outgoing.setHeader === 'function' && !outgoing.headersSent)
      outgoing.setHeader(REQUEST_ID_HEADER, id);
    else c.header(REQUEST_ID_HEADER, id);
    await next();
  };
}

/** The caller's `x-request-id` when acceptable, else a fresh UUID. */
export function acceptedRequestId(given: string | undefined): string {
  return given && ACCEPTABLE.test(given) ? given : randomUUID();
}

/**
 * The request id; before (or without) the middleware, the caller's header as given. Any app's
 * context: pkg/http's error envelope and SSE sinks serve apps that do not type the variable.
 */
export function requestIdOf(c: Context): string | undefined {
  const id: string | undefined = c.get('requestId');
  return id ?? c.req.header(REQUEST_ID_HEADER);
}
