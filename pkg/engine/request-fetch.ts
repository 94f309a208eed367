/**
 * A `fetch` for the engine's calls (the OpenAI SDK's model calls, tools) on undici's request API:
 * the answer is read as a Node stream and handed over as a `Response`, without the WHATWG fetch
 * machinery per call (its Request, Headers, body mixins and the request's web stream), which cost
 * about a third of a model call's CPU (test/bench/engine/model-call.ts). The dispatcher given
 * follows redirects (http.ts). What the request API does not take like fetch goes through fetch
 * itself: a body other than a string, and credentials in the URL (fetch refuses them).
 */
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';

type Fetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** Statuses whose Response may not carry a body (the constructor throws otherwise). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/** The request's headers as a record (what the request API takes). */
function headerRecord(init: RequestInit['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  if (init) for (const [k, v] of init instanceof Headers ? init : new Headers(init)) out[k] = v;
  return out;
}

function responseHeaders(raw: Dispatcher.ResponseData['headers']): Headers {
  const h = new Headers();
  for (const [k, v] of Object.entries(raw)) {
    if (Array.isArray(v)) for (const one of v) h.append(k, one);
    else if (v !== undefined) h.set(k, v);
  }
  return h;
}

/**
 * `fetch` over `dispatcher.request` (one that follows redirects), falling back to `fallback`;
 * `withCallHeaders` adds per-call headers (the current `traceparent`).
 */
export function requestFetch(
  dispatcher: Dispatcher,
  fallback: Fetch,
  withCallHeaders: (h: Record<string, string>) => Record<string, string>,
): Fetch {
  return async (url, init = {}) => {
    const u = new URL(url);
    const body = init.body ?? undefined;
    if ((body !== undefined && typeof body !== 'string') || u.username || u.password)
      return fallback(url, init);
    const res = await dispatcher.request({
      origin: u.origin,
      path: `${u.pathname}${u.search}`,
      method: (init.method ?? 'GET').toUpperCase() as Dispatcher.HttpMethod,
      headers: withCallHeaders(headerRecord(init.headers)),
      body,
      signal: init.signal ?? undefined,
    });
    const headers = responseHeaders(res.headers);
    if (NULL_BODY.has(res.statusCode)) {
      await res.body.dump();
      return new Response(null, { status: res.statusCode, headers });
    }
    // A whole answer (a completion, an error) is read here; a stream (SSE) is handed on as it comes.
    const streamed = (headers.get('content-type') ?? '').includes('text/event-stream');
    const payload = streamed
      ? (Readable.toWeb(res.body) as ReadableStream<Uint8Array>)
      : new Uint8Array(await res.body.arrayBuffer());
    return new Response(payload, { status: res.statusCode, headers });
  };
}
