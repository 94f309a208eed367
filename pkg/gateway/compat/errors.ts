import type { Context } from 'hono';
import { type ErrorCode, type ErrorRenderer, HttpError, type StatusOf } from '../../http/index.ts';
import { KubeError } from '../../kube/errors.ts';

export type OpenAIErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'rate_limit_error'
  | 'server_error'
  | 'timeout_error';

export interface OpenAIError {
  error: { message: string; type: OpenAIErrorType; param: string | null; code: ErrorCode | null };
}

/** The OpenAI error body: of an HTTP answer, or the frame that ends a stream that already began. */
export function openaiError(
  message: string,
  type: OpenAIErrorType,
  code: ErrorCode | null = null,
  param: string | null = null,
): OpenAIError {
  return { error: { message, type, param, code } };
}

export interface CompatErrorOptions<C extends ErrorCode> {
  /** The OpenAI error type; by default the one SDKs expect for the status. */
  type?: OpenAIErrorType;
  /** The request parameter at fault. */
  param?: string | null;
  /** False: `x-should-retry: false`; by default only a 5xx but 501 is retried. */
  retryable?: boolean;
  /** Another of the code's statuses (only those ERROR_CODES lists for it). */
  status?: StatusOf<C>;
}

/**
 * A /compat/v1 failure with what the OpenAI shape says beyond status and code. The code is one of
 * ERROR_CODES and gives the status, as for `httpError`.
 */
export class CompatError<C extends ErrorCode = ErrorCode> extends HttpError<C> {
  override name = 'CompatError';
  readonly type: OpenAIErrorType;
  readonly param: string | null;
  readonly retryable: boolean;

  constructor(code: C, message: string, opts: CompatErrorOptions<C> = {}) {
    super(code, message, undefined, { status: opts.status });
    this.type = opts.type ?? typeOf(this.status);
    this.param = opts.param ?? null;
    this.retryable = opts.retryable ?? defaultRetryable(this.status);
  }
}

/** The 503 of a request still waiting when the API service's shutdown grace period ended. */
export const shuttingDown = () =>
  new CompatError('shutting_down', 'the API service is shutting down; retry the request');

const defaultRetryable = (status: number) => status >= 500 && status !== 501;

/** The OpenAI error type SDKs expect for a status (for errors that did not say their own). */
function typeOf(status: number): OpenAIErrorType {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status === 504) return 'timeout_error';
  return status < 500 ? 'invalid_request_error' : 'server_error';
}

/**
 * `/compat/v1` errors in the OpenAI shape, rendered by the sub-app's one error handler.
 * Deterministic failures carry `x-should-retry: false` so SDKs do not retry what cannot succeed:
 * every 4xx, and 5xx answers about a query that ran (a retry would start another query, and a
 * timed-out one keeps running). Transient 5xx (broker unreachable, API server write failed) stay
 * retryable.
 */
export const renderOpenAIError: ErrorRenderer = (c: Context, err: HttpError) => {
  const compat = err instanceof CompatError ? err : undefined;
  if (!(compat?.retryable ?? defaultRetryable(err.status))) c.header('x-should-retry', 'false');
  return c.json(
    openaiError(err.message, compat?.type ?? typeOf(err.status), err.code, compat?.param ?? null),
    err.status,
  );
};

/**
 * Kubernetes failures of /compat/v1. Only creating the Query is validated, so an Invalid (422) is
 * the request's fault: 400 `query_create_failed`. Anything else is upstream: a retryable 502 with
 * the code `/v1` gives the same fault (`kubernetes_unavailable`, else `kubernetes_error`).
 */
export function kubeErrorToCompat(err: Error): HttpError | undefined {
  if (!(err instanceof KubeError)) return undefined;
  if (err.code === 422) return new CompatError('query_create_failed', err.message);
  const code = err.reason === 'Unavailable' ? 'kubernetes_unavailable' : 'kubernetes_error';
  return new CompatError(code, err.message, { status: 502 });
}
