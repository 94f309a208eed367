/**
 * Redirects of the engine's calls, followed by the engine itself instead of undici's interceptor,
 * so the rule about credentials is ours (undici drops only Authorization, Cookie and
 * Proxy-Authorization across origins; a Secret-valued `X-Api-Key` or Azure's `api-key` would go
 * along). The rule (docs/security.md, "Redirects"):
 *
 * - Same origin: followed with every header (at most 20 hops).
 * - Another origin (scheme, host or port differ): a Model or MCP call is refused; any other call goes on
 *   with only the protocol headers below, and never one the resource configured, whatever its name.
 * - Model calls also refuse a hop from https to http, and a hop to http outside
 *   `*.svc.cluster.local` (the spec's transport rule, per hop).
 * - A 303, and a 301/302 after a POST, become a GET without the body (as fetch does). A body that is
 *   a stream cannot be sent twice: a 307/308 to it is the answer.
 */
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { RedirectRefused } from './upstream.ts';

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
export const MAX_REDIRECTS = 20;

/** Headers that describe the request, never who sends it: the only ones sent to another origin. */
const PROTOCOL_HEADERS = new Set([
  'accept',
  'accept-language',
  'content-type',
  'user-agent',
  'traceparent',
  'tracestate',
]);

export interface RedirectRule {
  /** `refuse`: a hop to another origin fails the call; `strip`: it goes on with protocol headers only. */
  crossOrigin: 'refuse' | 'strip';
  /** Why a hop may not be made (a transport rule), or undefined. */
  hopProblem?(from: URL, to: URL): string | undefined;
  /** Names of the headers the resource configured (literal or from a Secret). */
  configured?: readonly string[];
}

export interface OutgoingRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: string | Readable | undefined;
  signal?: AbortSignal | undefined;
}

/** The transport rule of Model base URLs applied to each redirect hop. */
export function modelHopProblem(from: URL, to: URL): string | undefined {
  if (from.protocol === 'https:' && to.protocol === 'http:')
    return `redirect from ${from.origin} to ${to.origin} refused: a model call never goes from https to http`;
  if (to.protocol === 'http:' && !to.hostname.endsWith('.svc.cluster.local'))
    return `redirect to ${to.origin} refused: a model is called over https, or http to a *.svc.cluster.local Service`;
  return undefined;
}

export const MODEL_REDIRECTS: RedirectRule = { crossOrigin: 'refuse', hopProblem: modelHopProblem };

/** A hop from https to http: an MCP call's headers (and answers) never lose their transport security. */
function downgradeProblem(from: URL, to: URL): string | undefined {
  if (from.protocol === 'https:' && to.protocol === 'http:')
    return `redirect from ${from.origin} to ${to.origin} refused: an MCP call never goes from https to http`;
  return undefined;
}

/** MCP calls: within their origin only (as the MCP SDKs' `same-origin` policy), never to http from https. */
export const MCP_REDIRECTS: RedirectRule = { crossOrigin: 'refuse', hopProblem: downgradeProblem };

/** The headers that may follow a hop to another origin. */
export function crossOriginHeaders(
  headers: Record<string, string>,
  configured: readonly string[] = [],
): Record<string, string> {
  const mine = new Set(configured.map((h) => h.toLowerCase()));
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    const name = k.toLowerCase();
    if (PROTOCOL_HEADERS.has(name) && !mine.has(name)) out[k] = v;
  }
  return out;
}

function nextUrl(location: string, from: URL): URL {
  let next: URL;
  try {
    next = new URL(location, from);
  } catch {
    throw new RedirectRefused(`redirect from ${from.origin} to an invalid Location refused`);
  }
  if (next.protocol !== 'http:' && next.protocol !== 'https:')
    throw new RedirectRefused(`redirect to a ${next.protocol} URL refused`);
  if (next.username || next.password)
    throw new RedirectRefused(`redirect to ${next.host} refused: its URL carries credentials`);
  return next;
}

/** The request the next hop makes (method and body per the status, headers per the origin rule). */
function nextHop(req: OutgoingRequest, status: number, next: URL, rule: RedirectRule): OutgoingRequest {
  let { method, body, headers } = req;
  if (next.origin !== req.url.origin) {
    if (rule.crossOrigin === 'refuse')
      throw new RedirectRefused(
        `redirect from ${req.url.origin} to ${next.origin} refused: ${rule === MCP_REDIRECTS ? 'MCP' : 'model'} calls follow redirects within their origin only`,
      );
    headers = crossOriginHeaders(headers, rule.configured);
  }
  if ((status === 303 && method !== 'HEAD') || ((status === 301 || status === 302) && method === 'POST')) {
    method = 'GET';
    body = undefined;
    headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !/^content-/i.test(k)));
  }
  return { ...req, url: next, method, body, headers };
}

/**
 * Sends `req` through `dispatcher` (no redirect handling of its own) and follows redirects by the
 * rule; resolves with the final answer and its URL, or rejects with RedirectRefused.
 */
export async function requestFollowing(
  dispatcher: Dispatcher,
  first: OutgoingRequest,
  rule: RedirectRule,
): Promise<{ res: Dispatcher.ResponseData; url: URL }> {
  let req = first;
  for (let hop = 0; ; hop++) {
    const res = await dispatcher.request({
      origin: req.url.origin,
      path: `${req.url.pathname}${req.url.search}`,
      method: req.method as Dispatcher.HttpMethod,
      headers: req.headers,
      body: req.body,
      signal: req.signal,
    });
    const location = res.headers.location;
    if (!REDIRECTS.has(res.statusCode) || typeof location !== 'string') return { res, url: req.url };
    const rewritten =
      res.statusCode === 303 || (res.statusCode !== 307 && res.statusCode !== 308 && req.method === 'POST');
    if (req.body !== undefined && typeof req.body !== 'string' && !rewritten) return { res, url: req.url };
    // A redirect's own body is not wanted: a little is read (the connection is kept), more drops it.
    await res.body.dump({ limit: 4096 }).catch(() => undefined);
    if (req.body !== undefined && typeof req.body !== 'string') req.body.destroy();
    if (hop >= MAX_REDIRECTS) throw new RedirectRefused(`more than ${MAX_REDIRECTS} redirects`);
    const next = nextUrl(location, req.url);
    const problem = rule.hopProblem?.(req.url, next);
    if (problem) throw new RedirectRefused(problem);
    req = nextHop(req, res.statusCode, next, rule);
  }
}
