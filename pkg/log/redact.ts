/**
 * Secret scrubbing applied to every log record, whatever its depth. Key names are matched
 * case-insensitively; string values are scanned for tokens of known formats (tokens.ts) so that a
 * secret embedded in a message or an error text is caught too.
 *
 * The work per record is bounded whatever a caller hands in (a model's 1 MB error body, a 14 KB
 * request path, an object nested a thousand levels): see LIMITS. What is cut is replaced by a marker,
 * never passed through unscrubbed.
 */
import { REDACTED, scrubTokens } from './tokens.ts';

export { REDACTED, scrubTokens } from './tokens.ts';

const SECRET_KEYS = new Set(
  [
    'authorization',
    'proxy-authorization',
    'cookie',
    'set-cookie',
    'x-api-key',
    'x-auth-token',
    'x-csrf-token',
    'password',
    'token',
    'secret',
    'apikey',
    'api_key',
    'access_token',
    'refresh_token',
    'id_token',
    'client_secret',
    'code_verifier',
    'secret_key',
    'secretkey',
    'bearertoken',
    'api-key',
    'x-goog-api-key',
    'private_key',
    'privatekey',
    'client_assertion',
    'secret_hash',
    'session_token',
    'x-amz-security-token',
  ].map((k) => k.toLowerCase()),
);

export const TRUNCATED = '[Truncated]';

export const LIMITS = {
  /** A longer string is cut to this many characters (UTF-16 units) before it is scanned. */
  stringChars: 64 * 1024,
  /** Objects nested deeper are replaced by `[Truncated]` (strings at any depth are scrubbed). */
  depth: 8,
  /** Items of an array, own keys of an object, kept per level. */
  entries: 1000,
  /** Per record: string characters scanned and values visited; past either, `[Truncated]`. */
  recordChars: 1024 * 1024,
  recordValues: 20_000,
};

export function isSecretKey(key: string): boolean {
  return SECRET_KEYS.has(key.toLowerCase());
}

/** A cut that falls inside a token drops the token's head too (up to this far back). */
const TOKEN_CHAR = /[\w.~+/=:@-]/;
const TOKEN_BACKOFF = 1024;

/**
 * The first `max` characters of `text` and a marker with the bytes dropped. If the cut falls inside
 * a run of token characters, that run's kept part goes too, so no secret survives as a half that
 * the patterns no longer recognise.
 */
export function capString(text: string, max = LIMITS.stringChars): string {
  if (text.length <= max) return text;
  let end = max;
  const floor = Math.max(0, max - TOKEN_BACKOFF);
  if (TOKEN_CHAR.test(text.charAt(max))) while (end > floor && TOKEN_CHAR.test(text.charAt(end - 1))) end--;
  if (end > 0 && /[\uD800-\uDBFF]/.test(text.charAt(end - 1))) end--; // never half a surrogate pair
  const kept = text.slice(0, end);
  return `${kept}…[truncated ${Buffer.byteLength(text) - Buffer.byteLength(kept)} bytes]`;
}

/** `value` cut to the string cap, then scrubbed of every known token format. */
export function redactString(value: string): string {
  return scrubTokens(capString(value));
}

interface Walk {
  seen: WeakSet<object>;
  chars: number;
  values: number;
}

/** Deep copy of `value` with secrets replaced. Cycles, depth, breadth and total size are bounded. */
export function redact(value: unknown): unknown {
  return walk(value, 0, { seen: new WeakSet(), chars: 0, values: 0 });
}

function walk(value: unknown, depth: number, w: Walk): unknown {
  if (++w.values > LIMITS.recordValues) return TRUNCATED;
  if (typeof value === 'string') {
    if (w.chars >= LIMITS.recordChars) return TRUNCATED;
    const capped = capString(value, Math.min(LIMITS.stringChars, LIMITS.recordChars - w.chars));
    w.chars += capped.length;
    return scrubTokens(capped);
  }
  if (!value || typeof value !== 'object') return value;
  if (depth > LIMITS.depth) return TRUNCATED;
  if (w.seen.has(value)) return '[Circular]';
  w.seen.add(value);
  if (ArrayBuffer.isView(value)) return `[${value.constructor.name} of ${value.byteLength} bytes]`;
  if (Array.isArray(value)) {
    const out = value.slice(0, LIMITS.entries).map((v) => walk(v, depth + 1, w));
    if (value.length > LIMITS.entries) out.push(`[${value.length - LIMITS.entries} more items]`);
    return out;
  }
  if (value instanceof Error) {
    return {
      type: value.name,
      message: walk(value.message, depth + 1, w),
      stack: value.stack && walk(value.stack, depth + 1, w),
    };
  }
  const keys = Object.keys(value);
  const out: Record<string, unknown> = {};
  for (const k of keys.length > LIMITS.entries ? keys.slice(0, LIMITS.entries) : keys) {
    const v = (value as Record<string, unknown>)[k];
    out[k] = isSecretKey(k) && v !== undefined && v !== null ? REDACTED : walk(v, depth + 1, w);
  }
  if (keys.length > LIMITS.entries) out['…'] = `[${keys.length - LIMITS.entries} more keys]`;
  return out;
}

/**
 * `text` with every occurrence of the given secret values replaced, then scrubbed of token formats.
 * For what an upstream says back: a model or evaluator that quotes the credential it was sent
 * ("Incorrect API key provided: Bearer …") would otherwise put the value into a Query's status, its
 * events and the compat API's error, which every reader of the namespace sees. Values shorter than
 * 3 characters are not secrets worth garbling a message for.
 */
export function redactValues(text: string, values: Iterable<string>): string {
  let out = capString(text);
  const sorted = [...new Set(values)].filter((v) => v.length >= 3).sort((a, b) => b.length - a.length);
  for (const v of sorted) if (out.includes(v)) out = out.split(v).join(REDACTED);
  return scrubTokens(out);
}
