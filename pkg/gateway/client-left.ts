import type { Context } from 'hono';

/**
 * nginx's "client closed request": the status an access log and the metrics see for a request
 * whose client went away before its answer. Nobody reads the answer; it has no body.
 */
export const CLIENT_CLOSED_REQUEST = 499;

/** The answer to a request whose client went away (its request signal aborted). */
export function clientLeft(c: Context): Response {
  return c.body(null, CLIENT_CLOSED_REQUEST as 400);
}
