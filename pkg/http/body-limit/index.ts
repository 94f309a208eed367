import type { IncomingMessage } from 'node:http';
import type { Context, MiddlewareHandler } from 'hono';
import { httpError } from '../errors/codes.ts';
import { renderEnvelope } from '../errors/envelope.ts';
import { BodyTooLargeError, RequestChunks } from './request-chunks.ts';

export { BodyTooLargeError, isBodyAborted } from './request-chunks.ts';

/** What `bodyLimit()` sets on an app's context. */
export type BodyLimitVariables = {
  /** Set (to the limit message) once this request's body went over the cap. */
  bodyTooLarge: string;
  /** A chunked request body as it arrives, capped (see `requestBodyChunks`). */
  bodyChunks: AsyncIterable<Uint8Array>;
};

// Answered here rather than thrown: the middleware also replaces a response after `next()`.
const tooLarge = (c: Context, message: string) => renderEnvelope(c, httpError('payload_too_large', message));

/**
 * Request body cap. A declared `content-length` over the cap is refused at once; a chunked body is
 * counted as it streams (never buffered here, so NDJSON ingest still sees lines as they arrive) and
 * its stream fails once past the cap. The failure is flagged on the context so the error handler
 * answers 413 whichever reader tripped over it. The answer is the shared envelope unless
 * `onTooLarge` renders another.
 *
 * On the Node adapter the body is also offered as the Node request's own chunks
 * (`requestBodyChunks`, read from its `data` events by `RequestChunks`), with no Web stream between
 * the socket and the reader: the adapter's body is a Web stream over `Readable.toWeb`, which pauses
 * the request between reads, and a line of a streamed NDJSON upload read that way reached the
 * broker's code 3–10 ms later at p99 than read from the request itself (docs/broker.md). The Web
 * body a handler may read instead is built on the same chunks, only when read.
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
      // Node's parser holds the body to its declared length; the adapter's own fast reads stay.
      return next();
    }
    const incoming = nodeRequest(c);
    const onOver = () => c.set('bodyTooLarge', message);
    // Off the adapter only: there `raw.body` would build the Web stream over the Node request.
    const web = incoming ? null : c.req.raw.body;
    let chunks: AsyncIterable<Uint8Array>;
    if (incoming) chunks = new RequestChunks(incoming, { maxBytes, message, onOver });
    else if (web) chunks = capped(web, maxBytes, message, onOver);
    else return next();
    c.set('bodyChunks', chunks);
    c.req.raw = requestOver(c.req.raw, chunks);
    try {
      await next();
    } finally {
      if (bodyTooLarge(c) && c.res.status !== 413) c.res = onTooLarge(c, message);
    }
  };
}

/** The Node request behind `c` when the app runs on the Node adapter (not in `app.request()`). */
function nodeRequest(c: Context): IncomingMessage | undefined {
  const env = c.env as { incoming?: unknown } | undefined;
  const incoming = env?.incoming;
  return incoming && typeof (incoming as IncomingMessage).iterator === 'function'
    ? (incoming as IncomingMessage)
    : undefined;
}

/** A Web body as it is read, failing with BodyTooLargeError once past `maxBytes` (`onOver` flags it). */
async function* capped(
  source: AsyncIterable<Uint8Array>,
  maxBytes: number,
  message: string,
  onOver: () => void,
): AsyncGenerator<Uint8Array> {
  let seen = 0;
  for await (const chunk of source) {
    seen += chunk.byteLength;
    if (seen > maxBytes) {
      onOver();
      throw new BodyTooLargeError(message);
    }
    yield chunk;
  }
}

/**
 * The request with a Web body pulled from `chunks` on demand (high-water mark 0: nothing is read
 * until a handler reads it). Built from the parts rather than from the adapter's request, which
 * would build its own body stream over the socket.
 */
function requestOver(raw: Request, chunks: AsyncIterable<Uint8Array>): Request {
  let it: AsyncIterator<Uint8Array> | undefined;
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        it ??= chunks[Symbol.asyncIterator]();
        const r = await it.next();
        if (r.done) controller.close();
        else controller.enqueue(r.value);
      },
      async cancel() {
        await it?.return?.();
      },
    },
    { highWaterMark: 0 },
  );
  return new Request(raw.url, {
    method: raw.method,
    headers: raw.headers,
    body,
    signal: raw.signal,
    duplex: 'half',
  } as RequestInit);
}

/**
 * The request body as it arrives, for readers that act on each piece as it comes (NDJSON ingest):
 * capped when `bodyLimit()` counted it (a chunked body), and on the Node adapter the Node request's
 * own chunks; otherwise the Web body (null without one).
 */
export function requestBodyChunks(c: Context): AsyncIterable<Uint8Array> | null {
  const chunks: AsyncIterable<Uint8Array> | undefined = c.get('bodyChunks');
  if (chunks) return chunks;
  // A body with a declared length (not wrapped by the cap): the Node request's own chunks.
  const incoming = nodeRequest(c);
  return incoming ? new RequestChunks(incoming) : c.req.raw.body;
}

/** The limit message when this request's body went over the cap, else undefined (any app's context). */
export function bodyTooLarge(c: Context): string | undefined {
  const message: string | undefined = c.get('bodyTooLarge');
  return message;
}
