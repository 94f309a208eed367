import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import { httpError, requestIdOf } from '../http/index.ts';
import type { Logger } from '../log/index.ts';
import type { DashboardEnv, Paths } from './context.ts';

/**
 * Request headers never forwarded: hop-by-hop ones, the browser's cookies (they hold the session,
 * i.e. the tokens) and its own Authorization (the guard decides what the API gets), and the
 * forwarding headers this proxy sets itself.
 */
const DROPPED_REQUEST = new Set([
  'connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'expect',
  'host',
  'content-length',
  'cookie',
  'authorization',
  'accept-encoding',
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-forwarded-prefix',
]);

/** Response headers not passed back: hop-by-hop ones, and cookies (the API sets none on this origin). */
const DROPPED_RESPONSE = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'set-cookie',
]);

export interface ProxyOptions {
  /** API_SERVICE_URL, no trailing slash. */
  apiServiceUrl: string;
  paths: Paths;
  logger: Logger;
  /**
   * Drop the API's `WWW-Authenticate` (sso/hybrid): a Basic challenge reaching the browser would
   * pop up its password dialog, while the page itself handles a 401 by signing in again.
   */
  dropChallenges?: boolean;
}

/**
 * `<base>/api/<rest>` → `<API_SERVICE_URL>/<rest>` with the query string, the method and the body
 * streamed through, `Authorization` from the guard and the `X-Forwarded-*` headers of the spec.
 * Responses stream back as they arrive, so Server-Sent Events pass unbuffered.
 */
export function apiProxy(opts: ProxyOptions) {
  const origin = new URL(opts.apiServiceUrl).origin;
  return async (c: Context<DashboardEnv>): Promise<Response> => {
    const incoming = new URL(c.req.url);
    const rest = incoming.pathname.slice(opts.paths.api.length) || '/';
    const target = `${opts.apiServiceUrl}${rest}${incoming.search}`;
    const headers = forwardedHeaders(c, opts.paths);
    const method = c.req.method;
    const hasBody = method !== 'GET' && method !== 'HEAD' && c.req.raw.body !== null;
    let upstream: Response;
    try {
      upstream = await fetch(target, {
        method,
        headers,
        body: hasBody ? c.req.raw.body : undefined,
        // Streams the request body instead of buffering it (required by fetch for a stream body).
        ...(hasBody ? { duplex: 'half' } : {}),
        redirect: 'manual',
        signal: c.req.raw.signal,
      } as RequestInit);
    } catch (err) {
      if (c.req.raw.signal.aborted) return new Response(null, { status: 499 });
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw httpError(
        'api_unreachable',
        `the API service at ${origin} (API_SERVICE_URL) is not reachable: ${cause?.code ?? cause?.message ?? (err as Error).message}`,
      );
    }
    const out = new Headers();
    for (const [name, value] of upstream.headers) {
      if (DROPPED_RESPONSE.has(name) || (opts.dropChallenges && name === 'www-authenticate')) continue;
      out.append(name, value);
    }
    if (out.get('content-type')?.startsWith('text/event-stream')) {
      // Tells nginx-style ingresses not to buffer the stream either.
      out.set('x-accel-buffering', 'no');
      out.set('cache-control', 'no-cache');
    }
    const body = upstream.body && endQuietly(upstream.body, c.req.raw.signal, opts.logger);
    // Through the context, so what the guard set (the slid session cookie) goes out with it.
    return c.newResponse(body, { status: upstream.status as 200, headers: out });
  };
}

function forwardedHeaders(c: Context<DashboardEnv>, paths: Paths): Headers {
  const headers = new Headers();
  for (const [name, value] of c.req.raw.headers) if (!DROPPED_REQUEST.has(name)) headers.append(name, value);
  const auth = c.get('upstreamAuthorization');
  if (auth) headers.set('authorization', auth);
  // Identity encoding: the body is streamed as the API sends it, with an accurate length.
  headers.set('accept-encoding', 'identity');
  headers.set('x-forwarded-prefix', paths.api);
  headers.set('x-forwarded-host', c.req.header('host') ?? new URL(c.req.url).host);
  headers.set('x-forwarded-proto', protocolOf(c));
  const client = remoteAddress(c);
  const chain = c.req.header('x-forwarded-for');
  if (client) headers.set('x-forwarded-for', chain ? `${chain}, ${client}` : client);
  const rid = requestIdOf(c);
  if (rid) headers.set('x-request-id', rid);
  return headers;
}

/** The protocol the browser used: an ingress that terminates TLS says so in X-Forwarded-Proto. */
function protocolOf(c: Context): string {
  const told = c.req.header('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase();
  if (told === 'http' || told === 'https') return told;
  return new URL(c.req.url).protocol.replace(':', '');
}

function remoteAddress(c: Context): string | undefined {
  try {
    return getConnInfo(c).remote.address;
  } catch {
    return undefined; // not served by @hono/node-server (app.request in unit tests)
  }
}

/**
 * The upstream body, ending instead of erroring when the transfer breaks: a browser that leaves
 * aborts the upstream fetch (normal for SSE), and an API that dies mid-stream ends the stream
 * (EventSource reconnects). Otherwise the HTTP server prints the error to stderr, unstructured.
 */
function endQuietly(
  body: ReadableStream<Uint8Array>,
  clientGone: AbortSignal,
  logger: Logger,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (err) {
        if (!clientGone.aborted) logger.warn({ err: (err as Error).message }, 'API stream broke off');
        controller.close();
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}
