import type { Context, MiddlewareHandler } from 'hono';

/** Media type of the request without parameters, lower-cased ('' when absent). */
export function mediaTypeOf(c: Context): string {
  return (c.req.header('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/**
 * Refuses a request body of another media type with 415 (instead of letting the validator report
 * every field as missing). Bodiless requests pass when `optional`.
 */
export function requireMediaType(
  accepted: string[],
  onRefused: (c: Context, message: string) => Response,
  optional = false,
): MiddlewareHandler {
  return async (c, next) => {
    const type = mediaTypeOf(c);
    if (optional && (type === '' || !hasBody(c))) return next();
    if (!accepted.includes(type))
      return onRefused(
        c,
        `unsupported media type ${JSON.stringify(type || 'none')}; send ${accepted.join(' or ')}`,
      );
    return next();
  };
}

/**
 * From the headers when they tell (every HTTP/1.1 request with a body has one of them): reading
 * `c.req.raw.body` makes the Node adapter build a web stream, so it is only the fallback for
 * in-process requests (`app.request`) that carry neither.
 */
function hasBody(c: Context): boolean {
  const length = c.req.header('content-length');
  if (length !== undefined) return length !== '0';
  if (c.req.header('transfer-encoding') !== undefined) return true;
  return c.req.raw.body !== null;
}
