/**
 * A `fetch` for the engine's calls (the OpenAI SDK's model calls, tools, evaluators) on undici's
 * request API: the answer is read as a Node stream and handed over as a `Response`, without the
 * WHATWG fetch machinery per call (its Request, Headers, body mixins and the request's web stream),
 * which cost about a third of a model call's CPU (test/bench/engine/model-call.ts). Redirects are
 * followed by the engine's own rule (redirects.ts). Every answer is read under a byte cap
 * (upstream.ts): a whole answer up to the cap of what was called, a stream (SSE) until it passes
 * that cap, an error answer's first bytes only. What the request API does not take like fetch goes
 * through fetch itself: a body other than a string, and credentials in the URL (fetch refuses them).
 */
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { cappedStream, discard, readCapped, readPrefix } from './body.ts';
import type { OutgoingRequest } from './redirects.ts';
import type { UpstreamKind } from './upstream.ts';

/** Per call: what is called (its byte cap and redirect rule) and which headers its resource configured. */
export interface UpstreamCall {
  kind: UpstreamKind;
  /** Header names the resource configured (literal or from Secrets): never sent to another origin. */
  configured?: readonly string[];
}

export type EngineInit = RequestInit & { upstream?: UpstreamCall };
type Fetch = (url: string | URL, init?: EngineInit) => Promise<Response>;

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

export interface AnswerLimits {
  /** The cap of a successful answer of this kind. */
  answer: number;
  /** The part of an error answer kept. */
  error: number;
}

/**
 * The `Response` of an answer read under its caps: null-body statuses bodiless; status ≥ 300 the
 * first `error` bytes (the rest never read); an event stream as it arrives, failing past `answer`
 * bytes; anything else whole, or AnswerTooLarge past `answer` bytes.
 */
export async function cappedResponse(
  status: number,
  headers: Headers,
  body: Readable,
  kind: UpstreamKind,
  limits: AnswerLimits,
): Promise<Response> {
  if (NULL_BODY.has(status)) {
    discard(body);
    return new Response(null, { status, headers });
  }
  if (status >= 300) {
    const start = await readPrefix(body, limits.error);
    headers.delete('content-length');
    return new Response(new Uint8Array(start), { status, headers });
  }
  if ((headers.get('content-type') ?? '').includes('text/event-stream')) {
    const stream = Readable.toWeb(cappedStream(body, limits.answer, kind)) as ReadableStream<Uint8Array>;
    return new Response(stream, { status, headers });
  }
  return new Response(new Uint8Array(await readCapped(body, limits.answer, kind)), { status, headers });
}

/**
 * `fetch` over `send` (one request that follows redirects by the engine's rule), falling back to
 * `fallback`; `withCallHeaders` adds per-call headers (the current `traceparent`).
 */
export function requestFetch(
  send: (req: OutgoingRequest, call: UpstreamCall) => Promise<{ res: Dispatcher.ResponseData }>,
  fallback: Fetch,
  withCallHeaders: (h: Record<string, string>) => Record<string, string>,
  limitsOf: (kind: UpstreamKind) => AnswerLimits,
): Fetch {
  return async (url, init = {}) => {
    const u = new URL(url);
    const body = init.body ?? undefined;
    if ((body !== undefined && typeof body !== 'string') || u.username || u.password)
      return fallback(url, init);
    const call = init.upstream ?? { kind: 'other' };
    const { res } = await send(
      {
        url: u,
        method: (init.method ?? 'GET').toUpperCase(),
        headers: withCallHeaders(headerRecord(init.headers)),
        body,
        signal: init.signal ?? undefined,
      },
      call,
    );
    return cappedResponse(
      res.statusCode,
      responseHeaders(res.headers),
      res.body,
      call.kind,
      limitsOf(call.kind),
    );
  };
}
