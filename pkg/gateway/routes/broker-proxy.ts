import type { Context } from 'hono';
import { type AnyOpenAPIHono, httpError, requestIdOf, shutdownFrame } from '../../http/index.ts';
import { brokerAuthHeaders } from '../../http/service-token/index.ts';
import { clientLeft } from '../client-left.ts';
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
      throw httpError(
        'not_found',
        `no broker resource ${JSON.stringify(rest)}; readable: messages, conversations, memory-status, stream, traces, events, sessions`,
      );
    if (c.req.method !== 'GET')
      throw httpError('method_not_allowed', '/v1/broker is read-only: only GET is allowed', undefined, {
        headers: { allow: 'GET' },
      });
    if (!deps.brokerUrl)
      throw httpError(
        'broker_not_configured',
        'no broker is configured for this API instance (set BROKER_URL)',
      );
    const url = new URL(`${deps.brokerUrl.replace(/\/$/, '')}/${rest}`);
    url.search = new URL(c.req.url).search;
    // The API's own token (audience berth-broker), never the client's credentials: the broker lets the
    // service accounts of its namespace read (docs/security.md "Broker authentication").
    const headers: Record<string, string> = {
      accept: c.req.header('accept') ?? '*/*',
      ...brokerAuthHeaders(deps.brokerUrl, url),
    };
    const lastEventId = c.req.header('last-event-id');
    if (lastEventId) headers['last-event-id'] = lastEventId;
    const rid = requestIdOf(c);
    if (rid) headers['x-request-id'] = rid;
    let upstream: Response;
    try {
      upstream = await fetch(url, { headers, signal: c.req.raw.signal });
    } catch (err) {
      if (c.req.raw.signal.aborted) return clientLeft(c);
      // The error handler logs it (a warning, as every known 5xx), with this message.
      throw httpError(
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
    const sse = !!out.get('content-type')?.startsWith('text/event-stream');
    const body = upstream.body && endQuietly(upstream.body, c.req.raw.signal, deps, sse);
    return new Response(body, { status: upstream.status, headers: out });
  });
}

const SHUTDOWN_FRAME = shutdownFrame(
  'the API service is shutting down; reconnect with Last-Event-ID to resume',
);
const endsEvent = (b: Uint8Array) => b.length >= 2 && b[b.length - 1] === 10 && b[b.length - 2] === 10;

/**
 * The upstream body, ending instead of erroring when the transfer breaks: a client that goes away
 * aborts the upstream fetch (normal for SSE), and a broker that dies mid-stream ends the stream
 * (EventSource clients reconnect). Otherwise the HTTP server prints the error to stderr unstructured.
 * When the API service's shutdown grace period is over, an SSE relay ends with a `shutting_down`
 * error frame (if it stopped between two events, which the broker's writes always end on).
 */
function endQuietly(
  body: ReadableStream<Uint8Array>,
  clientGone: AbortSignal,
  deps: GatewayDeps,
  sse: boolean,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let atBoundary = true;
  let ended = false;
  let onShutdown = () => {};
  // Every way the relay ends goes through here, which also drops the listener on the long-lived signal.
  const end = () => {
    ended = true;
    deps.shutdown?.removeEventListener('abort', onShutdown);
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      onShutdown = () => {
        if (ended) return;
        end();
        if (sse && atBoundary) controller.enqueue(SHUTDOWN_FRAME);
        controller.close();
        void reader.cancel().catch(() => {});
      };
      deps.shutdown?.addEventListener('abort', onShutdown, { once: true });
    },
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (ended) return;
        if (done) {
          end();
          controller.close();
        } else {
          atBoundary = endsEvent(value);
          controller.enqueue(value);
        }
      } catch (err) {
        if (ended) return;
        end();
        if (!clientGone.aborted && !deps.shutdown?.aborted)
          deps.logger.warn({ err }, 'broker stream broke off');
        controller.close();
      }
    },
    cancel: (reason) => {
      end();
      return reader.cancel(reason);
    },
  });
}
