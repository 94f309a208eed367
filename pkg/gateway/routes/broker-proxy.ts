import type { Context } from 'hono';
import { type AnyOpenAPIHono, requestIdOf, sendError } from '../../http/index.ts';
import type { GatewayDeps } from '../deps.ts';

const READABLE = /^(messages|conversations|memory-status|stream|traces|events|sessions)(\/|$)/;
const PASSED_HEADERS = ['content-type', 'cache-control', 'x-request-id'];

/**
 * `/v1/broker/*`: read-only access to the broker. Bodies are streamed through as they arrive (SSE
 * included) and the upstream request is aborted when the client goes away.
 */
export function mountBrokerProxy(app: AnyOpenAPIHono, deps: GatewayDeps) {
  app.all('/v1/broker/*', async (c: Context) => {
    const rest = c.req.path.slice('/v1/broker/'.length);
    if (!READABLE.test(rest))
      return sendError(
        c,
        404,
        'not_found',
        `no broker resource ${JSON.stringify(rest)}; readable: messages, conversations, memory-status, stream, traces, events, sessions`,
      );
    if (c.req.method !== 'GET') {
      c.header('allow', 'GET');
      return sendError(c, 405, 'method_not_allowed', '/v1/broker is read-only: only GET is allowed');
    }
    if (!deps.brokerUrl)
      return sendError(
        c,
        503,
        'broker_not_configured',
        'no broker is configured for this API instance (set BROKER_URL)',
      );
    const url = new URL(`${deps.brokerUrl.replace(/\/$/, '')}/${rest}`);
    url.search = new URL(c.req.url).search;
    const headers: Record<string, string> = { accept: c.req.header('accept') ?? '*/*' };
    const lastEventId = c.req.header('last-event-id');
    if (lastEventId) headers['last-event-id'] = lastEventId;
    const rid = requestIdOf(c);
    if (rid) headers['x-request-id'] = rid;
    let upstream: Response;
    try {
      upstream = await fetch(url, { headers, signal: c.req.raw.signal });
    } catch (err) {
      if (c.req.raw.signal.aborted) return c.body(null, 499 as 400);
      deps.logger.warn({ err, url: url.origin }, 'broker unreachable');
      return sendError(
        c,
        503,
        'broker_unavailable',
        `the broker at ${url.origin} is not reachable: ${(err as Error).message}`,
      );
    }
    const out = new Headers();
    for (const h of PASSED_HEADERS) {
      const v = upstream.headers.get(h);
      if (v) out.set(h, v);
    }
    if (out.get('content-type')?.startsWith('text/event-stream')) out.set('x-accel-buffering', 'no');
    const body = upstream.body && endQuietly(upstream.body, c.req.raw.signal, deps.logger);
    return new Response(body, { status: upstream.status, headers: out });
  });
}

/**
 * The upstream body, ending instead of erroring when the transfer breaks: a client that goes away
 * aborts the upstream fetch (normal for SSE), and a broker that dies mid-stream ends the stream
 * (EventSource clients reconnect). Otherwise the HTTP server prints the error to stderr unstructured.
 */
function endQuietly(
  body: ReadableStream<Uint8Array>,
  clientGone: AbortSignal,
  logger: GatewayDeps['logger'],
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (err) {
        if (!clientGone.aborted) logger.warn({ err }, 'broker stream broke off');
        controller.close();
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}
