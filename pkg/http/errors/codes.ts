import type { ContentfulStatusCode } from 'hono/utils/http-status';

/**
 * Every error code a Berth server answers with, and its HTTP status: one vocabulary for the broker,
 * the API service (`/v1`, `/compat/v1`) and the dashboard. A handler names the code
 * (`throw httpError('not_found', …)`) and the status comes from here, so the two cannot disagree.
 * A code answered with more than one status lists them, the usual one first (docs/api.md says
 * when each applies). What each code means and who answers it: docs/api.md, "Error codes"; a test
 * keeps that table and this one in step.
 */
export const ERROR_CODES = {
  // The request as sent (pkg/http, every server).
  invalid_request: 400,
  invalid_json: 400,
  json_too_deep: 400,
  not_found: 404,
  method_not_allowed: 405,
  payload_too_large: 413,
  unsupported_media_type: 415,
  // Who is asking.
  unauthorized: 401,
  forbidden: 403,
  impersonation_forbidden: 403,
  rate_limited: 429,
  auth_unavailable: 503,
  // API keys.
  parent_key_inactive: 403,
  invalid_expiry: 422,
  // The Kubernetes API server's answers (pkg/gateway/kube-error-mapper.ts); `invalid` is also the
  // 400 of a Secret write the API refuses before the API server sees it.
  bad_request: 400,
  invalid_resource_version: 400,
  already_exists: 409,
  conflict: 409,
  gone: 410,
  object_too_large: 413,
  invalid: [422, 400],
  timeout: 504,
  // 502 from /compat/v1, whose upstream the API server is.
  kubernetes_unavailable: [503, 502],
  // 502, or the API server's own status when no other code names it (`relayedError`).
  kubernetes_error: 502,
  // Marketplace sources.
  credential_required: 400,
  credential_rejected: 400,
  invalid_name: 422,
  invalid_url: 422,
  address_not_allowed: 422,
  source_unreachable: 422,
  // The broker seen from the API service.
  broker_error: 502,
  broker_not_configured: 503,
  broker_unavailable: 503,
  // /compat/v1 chat completions (the Query's end reasons: pkg/gateway/compat/end-answers.ts).
  invalid_model: 400,
  invalid_value: 400,
  invalid_query: 400,
  query_create_failed: 400,
  model_not_found: 404,
  invalid_target: 500,
  query_canceled: 500,
  query_failed: 500,
  query_orphaned: 500,
  query_purged: 500,
  model_error: 502,
  tool_error: 502,
  memory_error: 502,
  stream_broken: 502,
  stream_ended: 502,
  invalid_output: 502,
  tool_call_rejected: 403,
  // Decisions on a waiting Query (POST /v1/namespaces/{ns}/queries/{name}/approvals).
  query_not_waiting: 409,
  approval_not_found: 404,
  approval_already_decided: 409,
  approval_expired: 409,
  approval_forbidden: 403,
  invalid_decision: 422,
  invalid_arguments: 422,
  // Berth's MCP server (`/mcp`, revision 2025-11-25 sessions).
  mcp_session_required: 400,
  mcp_session_not_found: 404,
  mcp_session_limit: 429,
  // The broker's own.
  invalid_chunk: 400,
  invalid_encoding: 400,
  invalid_idempotency_key: 400,
  invalid_otlp: 400,
  idempotency_key_in_use: 409,
  unsupported_encoding: 415,
  decoder_unavailable: 503,
  storage_unavailable: 503,
  // The dashboard's sign-in and proxy.
  signin_failed: 400,
  signin_state_missing: 400,
  csrf_token_invalid: 403,
  api_unreachable: 502,
  provider_unavailable: 503,
  // The server itself.
  internal: 500,
  not_ready: 503,
  shutting_down: 503,
} as const satisfies Record<string, ContentfulStatusCode | readonly ContentfulStatusCode[]>;

export type ErrorCode = keyof typeof ERROR_CODES;

type Entry<C extends ErrorCode> = (typeof ERROR_CODES)[C];

/** The statuses a code may be answered with (one, for most); for a union of codes, any of theirs. */
export type StatusOf<C extends ErrorCode> = C extends ErrorCode
  ? Entry<C> extends readonly (infer S)[]
    ? S
    : Entry<C>
  : never;

/** The codes answered with one status, e.g. `CodeWithStatus<503>` for what `/readyz` may say. */
export type CodeWithStatus<S extends ContentfulStatusCode> = {
  [C in ErrorCode]: StatusOf<C> extends S ? C : never;
}[ErrorCode];

/** A code's usual status. */
export function statusOf(code: ErrorCode): ContentfulStatusCode {
  const entry: ContentfulStatusCode | readonly ContentfulStatusCode[] = ERROR_CODES[code];
  return typeof entry === 'number' ? entry : (entry[0] as ContentfulStatusCode);
}

export interface HttpErrorOptions<C extends ErrorCode> {
  /** Response headers the error handler adds (`retry-after`, `www-authenticate`, `allow`). */
  headers?: Record<string, string>;
  /** Another of the code's statuses (only those ERROR_CODES lists for it). */
  status?: StatusOf<C>;
}

/**
 * A failure a handler throws instead of answering itself: the app's one error handler renders it
 * (as the envelope, or in a sub-app's own shape), so no handler needs a try/catch to report one.
 * The code names the fault and ERROR_CODES gives its status: a code not in it, or a status the
 * code does not list, does not type-check (`relayedError` is the one way to another status).
 */
export class HttpError<C extends ErrorCode = ErrorCode> extends Error {
  override name = 'HttpError';
  readonly status: ContentfulStatusCode;
  readonly code: ErrorCode;
  readonly details?: unknown;
  /** Response headers the error handler adds (e.g. `retry-after` on a 503). */
  readonly headers?: Record<string, string>;

  constructor(code: C, message: string, details?: unknown, opts: HttpErrorOptions<C> = {}) {
    // An HttpError is an answer, not a fault: its code says where it came from. Capturing a stack
    // for each would make every refused request (a 400 of a hostile client's flood included) ~10 %
    // dearer; errors that are faults keep theirs.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.status = (opts.status as ContentfulStatusCode | undefined) ?? statusOf(code);
    this.code = code;
    if (details !== undefined) this.details = details;
    if (opts.headers !== undefined) this.headers = opts.headers;
  }
}

/** `new HttpError(…)`, as a handler writes it: `throw httpError('not_found', …)`. */
export function httpError<C extends ErrorCode>(
  code: C,
  message: string,
  details?: unknown,
  opts: HttpErrorOptions<C> = {},
): HttpError {
  return new HttpError(code, message, details, opts);
}

/**
 * A failure whose status was chosen elsewhere and is passed on as it is: by another server (the
 * Kubernetes API server's, for `kubernetes_error`), or by an error being re-thrown with more to
 * say. The code is still one of ERROR_CODES; only here may the status be one it does not list.
 */
export function relayedError(
  status: ContentfulStatusCode,
  code: ErrorCode,
  message: string,
  details?: unknown,
  headers?: Record<string, string>,
): HttpError {
  return new HttpError(code, message, details, { headers, status: status as StatusOf<ErrorCode> });
}
