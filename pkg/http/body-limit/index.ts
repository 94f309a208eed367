import type { Context, MiddlewareHandler } from 'hono';
import { httpError } from '../errors/codes.ts';
import { renderEnvelope } from '../errors/envelope.ts';

/** What `bodyLimit()` sets on an app's context. */
export type BodyLimitVariables = {
  /** Set (to the limit message) once this request's body went over the cap. */
  bodyTooLarge: string;
};

// Answered here rather than thrown: the middleware also replaces a response after `next()`.
const tooLarge = (c: Context, message: string) => renderEnvelope(c, httpError('payload_too_large', message));

/**
 * Request body cap. A declared `content-length` over the cap is refused at once; a chunked body is
 * counted as it streams (never buffered here, so NDJSON ingest still sees lines as they arrive) and
 * its stream fails once past the cap. The failure is flagged on the context so the error handler
 * answers 413 whichever reader tripped over it. The answer is the shared envelope unless
 * `onTooLarge` renders another.
 */
export function bodyLimit(
  maxBytes: number,
  onTooLarge: (c: Context, message: string) => Response = tooLarge,
): MiddlewareHandler<{ Variables: BodyLimitVariables }> {
  return async (c, next) => {
    // Headers first: touching `raw.body` makes @hono/node-server build a full web Request and
    // stream, which costs more than the rest of a small JSON request (see docs/broker.md).
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next();
    const declared = c.req.header('content-length');
    const message = `request body exceeds the limit of ${maxBytes} bytes`;
    if (declared !== undefined && c.req.header('transfer-encoding') === undefined) {
      if (Number(declared) > maxBytes) return onTooLarge(c, message);
      return next();
    }
    const raw = c.req.raw;
    if (!raw.body) return next();
    let seen = 0;
    const counted = raw.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          seen += chunk.byteLength;
          if (seen > maxBytes) {
            c.set('bodyTooLarge', message);
            controller.error(new BodyTooLargeError(message));
            return;
          }
          controller.enqueue(chunk);
        },
      }),
    );
    c.req.raw = new Request(raw, { body: counted, duplex: 'half' } as RequestInit);
    try {
      await next();
    } finally {
      if (bodyTooLarge(c) && c.res.status !== 413) c.res = onTooLarge(c, message);
    }
  };
}

export class BodyTooLargeError extends Error {
  override name = 'BodyTooLargeError';
}

/** The limit message when this request's body went over the cap, else undefined (any app's context). */
export function bodyTooLarge(c: Context): string | undefined {
  const message: string | undefined = c.get('bodyTooLarge');
  return message;
}
