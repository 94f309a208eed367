/**
 * One HTTP client for everything the engine calls (models, tools, memories, broker): a shared undici
 * Agent keeps connections alive across queries, and extra CAs (a private model endpoint, the test CA)
 * can be given in-process instead of only through NODE_EXTRA_CA_CERTS at process start.
 */
import { PassThrough, Readable, type Writable } from 'node:stream';
import { createSecureContext, getCACertificates, rootCertificates } from 'node:tls';
import { Agent, fetch as undiciFetch } from 'undici';
import { clusterAddressRule, guardedConnector, type Resolver } from '../http/outbound/index.ts';
import { readCapped, readPrefix } from './body.ts';
import {
  MCP_REDIRECTS,
  MODEL_REDIRECTS,
  type OutgoingRequest,
  type RedirectRule,
  requestFollowing,
} from './redirects.ts';
import { cappedResponse, type EngineInit, requestFetch, type UpstreamCall } from './request-fetch.ts';
import { currentTraceparent } from './tracing.ts';
import {
  answerLimit,
  type UpstreamKind,
  type UpstreamLimits,
  upstreamErrorIn,
  upstreamLimits,
} from './upstream.ts';

export type { EngineInit, UpstreamCall };
export type EngineFetch = (url: string | URL, init?: EngineInit) => Promise<Response>;
/** POST of a JSON body that only needs the status back (events): resolves with it, throws on network errors. */
export type PostJson = (url: string, body: string, headers?: Record<string, string>) => Promise<number>;
/**
 * A request whose whole answer is read as text (memory calls), under the byte cap of `upstream`
 * (an error answer: its first bytes only); redirects are followed by the engine's rule.
 */
export type SendText = (
  url: string,
  init: {
    method: string;
    headers: Record<string, string>;
    body?: string | undefined;
    signal?: AbortSignal | undefined;
    upstream?: UpstreamCall | undefined;
  },
) => Promise<{ status: number; text: string }>;

/**
 * A POST whose body is written while it is under way (a query's NDJSON chunk upload): `body` takes
 * the lines, ending it ends the request; `status` settles with the answer's status, or rejects with
 * the network error.
 */
export type OpenUpload = (
  url: string,
  contentType: string,
  headers?: Record<string, string>,
) => { body: Writable; status: Promise<number> };

export interface HttpClient {
  fetch: EngineFetch;
  /** `fetch` with `upstream` set on every call that does not set its own (the SDK's model calls). */
  fetchFor(call: UpstreamCall): EngineFetch;
  postJson: PostJson;
  send: SendText;
  upload: OpenUpload;
  dispatcher: Agent;
  limits: UpstreamLimits;
  close(): Promise<void>;
}

/** Default trust store plus the extra CAs; undici's `ca` replaces the store, so the defaults are kept here. */
function trustStore(extra: string | string[]): string[] {
  let base: readonly string[];
  try {
    // 'default' includes NODE_EXTRA_CA_CERTS and --use-system-ca when the process enabled them.
    base = getCACertificates('default');
  } catch {
    base = rootCertificates;
  }
  return [...base, ...(Array.isArray(extra) ? extra : [extra])];
}

/**
 * Model calls refuse other origins and downgrades, MCP calls other origins (the MCP SDKs' own
 * default); every other call strips what its resource configured.
 */
function redirectRule(call: UpstreamCall): RedirectRule {
  if (call.kind === 'model') return MODEL_REDIRECTS;
  if (call.kind === 'mcp') return MCP_REDIRECTS;
  return { crossOrigin: 'strip', configured: call.configured };
}

export interface HttpClientOptions {
  ca?: string | string[];
  resolve?: Resolver;
  /** Byte caps of answers; unset ones come from the environment (ENGINE_MAX_*), else the defaults. */
  limits?: Partial<UpstreamLimits>;
  env?: NodeJS.ProcessEnv;
}

export function createHttpClient(opts: HttpClientOptions = {}): HttpClient {
  const limits = upstreamLimits(opts.limits, opts.env);
  const limitsOf = (kind: UpstreamKind) => ({ answer: answerLimit(limits, kind), error: limits.errorBytes });
  const dispatcher = new Agent({
    // One SecureContext for all connections: building one from ~150 root certificates per TLS
    // connection was the largest cost of a query in the benchmark. Every connection (redirect hops
    // included) passes the cluster address rule: addresses in resources never reach cloud metadata
    // or link-local (docs/security.md).
    connect: guardedConnector(clusterAddressRule, {
      resolve: opts.resolve,
      tls: opts.ca ? { secureContext: createSecureContext({ ca: trustStore(opts.ca) }) } : {},
    }),
    keepAliveTimeout: 30_000,
    // Query timeouts are enforced by the engine's own deadline signal; undici's 300 s defaults would
    // cut long (spec.timeout > 5m) model calls and long-lived chunk uploads short.
    headersTimeout: 0,
    bodyTimeout: 0,
  });
  // fetch itself, for what the request API does not take: redirects are not followed there (its
  // rule would carry configured headers to another origin), and the answer is read under the caps.
  const viaFetch: EngineFetch = async (url, init) => {
    const { upstream, ...rest } = init ?? {};
    const call = upstream ?? { kind: 'other' };
    const res = (await undiciFetch(url, {
      ...(rest as object),
      redirect: 'manual',
      headers: withTraceparentRecord(Object.fromEntries(new Headers(rest.headers))),
      dispatcher,
    } as Parameters<typeof undiciFetch>[1])) as unknown as Response;
    const body = res.body ? Readable.fromWeb(res.body as never) : Readable.from([]);
    return cappedResponse(res.status, new Headers(res.headers), body, call.kind, limitsOf(call.kind));
  };
  // undici's request API skips the WHATWG fetch machinery: several times cheaper per call, which
  // matters for events, memory calls and model calls. Redirects are followed by the engine's own
  // rule (redirects.ts), each hop's connection through the address rule above.
  const request = (req: OutgoingRequest, call: UpstreamCall = { kind: 'other' }) =>
    requestFollowing(dispatcher, req, redirectRule(call));
  // Broker credentials are the caller's (a broker route's headers): this client adds none itself.
  const postJson: PostJson = async (url, body, extra = {}) => {
    const u = new URL(url);
    const headers = { ...extra, 'content-type': 'application/json' };
    const { res } = await request({ url: u, method: 'POST', headers, body });
    await res.body.dump();
    return res.statusCode;
  };
  // Memory calls (history read, conversation, append: two or three per query): through fetch, its
  // Request, Headers and web streams were the engine's largest own cost per chat completion.
  const send: SendText = async (url, init) => {
    const u = new URL(url);
    const headers = withTraceparentRecord(init.headers);
    const call = init.upstream ?? { kind: 'other' };
    if (!u.username && !u.password) {
      const { res } = await request({ url: u, ...init, headers }, call);
      const { answer, error } = limitsOf(call.kind);
      const bytes =
        res.statusCode >= 300
          ? await readPrefix(res.body, error)
          : await readCapped(res.body, answer, call.kind);
      return { status: res.statusCode, text: bytes.toString('utf8') };
    }
    // fetch refuses credentials in a URL, with its own error: the same answer as before.
    const res = await viaFetch(url, {
      method: init.method,
      headers,
      body: init.body,
      signal: init.signal,
      upstream: call,
    });
    return { status: res.status, text: await res.text() };
  };
  // Chunk uploads: a Node stream as the body instead of a web ReadableStream through fetch.
  const upload: OpenUpload = (url, contentType, extra = {}) => {
    const body = new PassThrough();
    // A failed request destroys the body; later writes must not raise an unhandled 'error'.
    body.on('error', () => {});
    const u = new URL(url);
    const headers = withTraceparentRecord({ ...extra, 'content-type': contentType });
    const status = request({ url: u, method: 'POST', headers, body }).then(async ({ res }) => {
      await res.body.dump();
      return res.statusCode;
    });
    return { body, status };
  };
  const fetch = requestFetch(request, viaFetch, withTraceparentRecord, limitsOf);
  const fetchFor =
    (call: UpstreamCall): EngineFetch =>
    (url, init) =>
      fetch(url, { ...init, upstream: init?.upstream ?? call });
  return { fetch, fetchFor, postJson, send, upload, dispatcher, limits, close: () => dispatcher.close() };
}

/**
 * A copy of `headers` with the W3C `traceparent` of the engine span the call is made in (model,
 * tool and memory calls each run in one) unless they carry one, so the callee's own spans join the
 * query's trace.
 */
function withTraceparentRecord(headers: Record<string, string>): Record<string, string> {
  const out = { ...headers };
  const traceparent = currentTraceparent();
  if (traceparent && !Object.keys(out).some((k) => k.toLowerCase() === 'traceparent'))
    out.traceparent = traceparent;
  return out;
}

/** A failed HTTP exchange, carrying what was called and the status so outcomes and logs are actionable. */
export class HttpError extends Error {
  readonly status: number;
  constructor(what: string, status: number, detail: string) {
    super(`${what}: HTTP ${status}${detail ? `: ${detail}` : ''}`);
    this.name = 'HttpError';
    this.status = status;
  }
}

const REFUSED_ATTEMPTS = 4;
const REFUSED_BACKOFF_MS = 250;

/** Whether a request failed because the connection was refused (nothing was sent). */
function isRefused(err: unknown): boolean {
  let cur: unknown = err;
  for (let depth = 0; cur && depth < 5; depth++) {
    if ((cur as { code?: string }).code === 'ECONNREFUSED') return true;
    cur = (cur as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Whether the connection closed under the request (a pooled keep-alive socket the server was
 * closing: a replica draining). The server may or may not have acted on it, so only a request it
 * can recognise when sent again (Idempotency-Key) is.
 */
function isClosedUnder(err: unknown): boolean {
  let cur: unknown = err;
  for (let depth = 0; cur && depth < 5; depth++) {
    const code = (cur as { code?: string }).code;
    if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE') return true;
    cur = (cur as { cause?: unknown }).cause;
  }
  return false;
}

const resendable = (headers: Record<string, string>) =>
  Object.keys(headers).some((k) => k.toLowerCase() === 'idempotency-key');

function sleepUnless(signal: AbortSignal | undefined, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Sends a JSON request and returns the parsed JSON answer (undefined for an empty body). A refused
 * connection is retried (up to 4 attempts, 250 ms × attempt apart), and so is one that closed under
 * a request carrying an Idempotency-Key.
 */
export async function requestJson<T>(
  send: SendText,
  what: string,
  url: string,
  init: {
    method: string;
    body?: unknown;
    headers?: Record<string, string>;
    signal?: AbortSignal;
    upstream?: UpstreamCall;
  },
): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', ...init.headers };
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  let status = 0;
  let text = '';
  for (let attempt = 1; ; attempt++) {
    try {
      ({ status, text } = await send(url, {
        method: init.method,
        headers,
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
        signal: init.signal,
        upstream: init.upstream,
      }));
      break;
    } catch (err) {
      if (init.signal?.aborted) throw init.signal.reason ?? err;
      // A refused connection sent nothing: retrying is safe whatever the method (a Service whose
      // pod is being replaced refuses for a moment during a rollout).
      if (attempt < REFUSED_ATTEMPTS && (isRefused(err) || (resendable(headers) && isClosedUnder(err)))) {
        await sleepUnless(init.signal, REFUSED_BACKOFF_MS * attempt);
        continue;
      }
      throw new Error(`${what}: ${describeNetworkError(err)}`);
    }
  }
  if (status < 200 || status >= 300) throw new HttpError(what, status, text.slice(0, 300));
  if (!text) return undefined as T;
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error(`${what}: answer is not JSON: ${text.slice(0, 120)}`);
  }
}

/** fetch() and SDK failures hide the useful part (ECONNREFUSED, certificate errors) in a `cause` chain. */
export function describeNetworkError(err: unknown): string {
  // The engine's own verdict (a cap, a refused redirect) says it all, wherever an SDK wrapped it.
  const own = upstreamErrorIn(err);
  if (own) return own.message;
  if (!(err instanceof Error)) return String(err);
  const parts = [err.message];
  let cur: unknown = (err as { cause?: unknown }).cause;
  for (let depth = 0; cur instanceof Error && depth < 4; depth++) {
    const code = (cur as { code?: string }).code;
    parts.push(code && !cur.message.includes(code) ? `${code}: ${cur.message}` : cur.message);
    cur = (cur as { cause?: unknown }).cause;
  }
  return parts.join(': ');
}

/** The spec's transport rule for Model base URLs, re-checked at run time (the CRD rule can be bypassed). */
export function modelUrlProblem(baseUrl: string): string | undefined {
  let u: URL;
  try {
    u = new URL(baseUrl);
  } catch {
    return `baseUrl "${baseUrl}" is not an absolute URL`;
  }
  if (u.protocol === 'https:') return undefined;
  if (u.protocol === 'http:' && u.hostname.endsWith('.svc.cluster.local')) return undefined;
  return `baseUrl "${baseUrl}" is not allowed: model URLs must be https:// or http://<service>.svc.cluster.local`;
}
