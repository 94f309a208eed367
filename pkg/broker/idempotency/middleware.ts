import type { Env, MiddlewareHandler } from 'hono';
import { httpError } from '../../http/index.ts';
import type { IdempotencyStore } from './types.ts';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'idempotent-replayed';
const ACCEPTABLE = /^[\x21-\x7e]{1,255}$/;

/**
 * `Idempotency-Key` on a route: the first request with a key runs and its answer is kept; a
 * repeat (the same method, path and key) gets that answer again, marked `Idempotent-Replayed:
 * true`, without running — so a purge the controller repeats after a leader's death is executed
 * once. A repeat while the first still runs gets 409 with `Retry-After`. Answers of 500 and above
 * are not kept (the request may be tried again). Requests without the header are untouched.
 */
export function idempotent(store: IdempotencyStore, methods = ['DELETE']): MiddlewareHandler<Env> {
  return async (c, next) => {
    const given = c.req.header(IDEMPOTENCY_HEADER);
    if (given === undefined || !methods.includes(c.req.method)) return next();
    if (!ACCEPTABLE.test(given))
      throw httpError(
        'invalid_idempotency_key',
        'Idempotency-Key must be 1 to 255 printable ASCII characters without spaces',
      );
    const key = `${c.req.method} ${c.req.path} ${given}`;
    const begun = await store.begin(key);
    if (begun.state === 'done') {
      const r = begun.response;
      return c.body(r.body, r.status as 200, { 'content-type': r.contentType, [REPLAYED_HEADER]: 'true' });
    }
    if (begun.state === 'busy')
      throw httpError(
        'idempotency_key_in_use',
        'a request with this Idempotency-Key is still running',
        undefined,
        {
          headers: { 'retry-after': '1' },
        },
      );
    try {
      await next();
    } catch (err) {
      await store.abandon(key);
      throw err;
    }
    if (c.res.status >= 500) return void (await store.abandon(key));
    const body = await c.res.clone().text();
    await store.finish(key, {
      status: c.res.status,
      body,
      contentType: c.res.headers.get('content-type') ?? 'application/json',
    });
  };
}
