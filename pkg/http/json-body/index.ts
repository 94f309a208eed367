import type { Context, MiddlewareHandler } from 'hono';
import { httpError } from '../errors/codes.ts';
import { mediaTypeOf } from '../media-type/index.ts';

/** What `jsonDepthLimit()` sets on an app's context. */
export type JsonDepthVariables = {
  /** Set (to the refusal message) once this request's JSON body was found nested too deep. */
  jsonTooDeep: string;
  /** Set once this request's JSON text body was read and found within the depth limit. */
  jsonDepthChecked: boolean;
};

/**
 * How deeply arrays and objects may nest in a JSON request body. V8 parses any depth, but the
 * recursive steps after parsing (validation, `JSON.stringify` into a store or to the API server)
 * overflow the stack somewhere past a few thousand levels; no document either service accepts
 * needs more than a few dozen.
 */
export const MAX_JSON_DEPTH = 100;

const JSON_MEDIA = /^application\/([\w.-]+\+)?json$/;
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export const jsonTooDeepMessage = (limit: number) =>
  `JSON body is nested more than ${limit} levels deep (the limit of this service)`;

/** 400 `json_too_deep`: the caller's document, not the service, is at fault. */
export const jsonTooDeep = (limit: number) => httpError('json_too_deep', jsonTooDeepMessage(limit));

/**
 * Whether arrays and objects in JSON text nest deeper than `limit`. A scan, not a parse: string
 * contents are skipped with `indexOf` (native), so a large document of long strings costs little.
 */
export function exceedsJsonDepth(text: string, limit = MAX_JSON_DEPTH): boolean {
  if (text.length <= limit) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 0x22 /* " */) {
      i = jsonStringEnd(text, i);
      if (i < 0) return false; // unterminated: JSON.parse reports it
    } else if (ch === 0x7b /* { */ || ch === 0x5b /* [ */) {
      if (++depth > limit) return true;
    } else if (ch === 0x7d /* } */ || ch === 0x5d /* ] */) depth--;
  }
  return false;
}

/** Index of the quote closing the JSON string that opens at `start`, or -1. */
export function jsonStringEnd(text: string, start: number): number {
  let i = start;
  for (;;) {
    i = text.indexOf('"', i + 1);
    if (i < 0) return -1;
    let slashes = 0;
    while (text.charCodeAt(i - 1 - slashes) === 0x5c /* \ */) slashes++;
    if (slashes % 2 === 0) return i;
  }
}

/** `JSON.parse` behind the depth limit: throws the 400 `json_too_deep`, or JSON.parse's SyntaxError. */
export function parseJson(text: string, limit = MAX_JSON_DEPTH): unknown {
  if (exceedsJsonDepth(text, limit)) throw jsonTooDeep(limit);
  return JSON.parse(text);
}

/**
 * The depth limit on every JSON request body, whoever reads it later (a route's validator, a
 * handler's `c.req.json()`). The body is read here once (Hono caches it for later readers); when it
 * is too deep, the cached body becomes a failed read and the request is flagged, so the app's (or a
 * sub-app's) error handler answers 400 `json_too_deep` in its own shape, as it does for the body
 * limit. Bodies a route streams (NDJSON) or that are compressed are not JSON here and pass as they
 * are: their parsers call `parseJson` themselves, as do the routes `checkedByRoute` names.
 */
export function jsonDepthLimit(
  limit = MAX_JSON_DEPTH,
  opts: { checkedByRoute?: (path: string) => boolean } = {},
): MiddlewareHandler<{ Variables: JsonDepthVariables }> {
  return async (c, next) => {
    if (!BODY_METHODS.has(c.req.method) || !JSON_MEDIA.test(mediaTypeOf(c))) return next();
    // A route whose own scan of the body checks the depth too (one pass instead of two).
    if (opts.checkedByRoute?.(c.req.path)) return next();
    const encoding = c.req.header('content-encoding');
    if (encoding && encoding.toLowerCase() !== 'identity') return next();
    let text: string;
    try {
      text = await c.req.text();
    } catch {
      // A failed read (the body limit, a client gone) stays cached: whoever reads next reports it.
      return next();
    }
    if (!exceedsJsonDepth(text, limit)) c.set('jsonDepthChecked', true);
    else {
      const refused = jsonTooDeep(limit);
      c.set('jsonTooDeep', refused.message);
      const failed = Promise.reject(refused);
      failed.catch(() => {}); // a route that never reads its body must not leave it unhandled
      (c.req.bodyCache as Record<string, Promise<unknown>>).text = failed;
    }
    return next();
  };
}

/**
 * `text` — this request's body as read by `c.req.text()` — parsed, without a second depth scan
 * when the depth-limit middleware already checked that very text. (Reading the cached text rather
 * than the bytes also spares Hono encoding it again and the route decoding it once more.)
 */
export function parseJsonBody(c: Context, text: string, limit = MAX_JSON_DEPTH): unknown {
  const checked: boolean | undefined = c.get('jsonDepthChecked');
  return checked ? JSON.parse(text) : parseJson(text, limit);
}

/** The refusal message when this request's JSON body was too deep, else undefined (any app's context). */
export function jsonTooDeepOf(c: Context): string | undefined {
  const message: string | undefined = c.get('jsonTooDeep');
  return message;
}
