import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

export type OpenAIErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'not_found_error'
  | 'server_error'
  | 'timeout_error';

export interface OpenAIError {
  error: { message: string; type: OpenAIErrorType; param: string | null; code: string | null };
}

export function openaiError(
  message: string,
  type: OpenAIErrorType,
  code: string | null = null,
  param: string | null = null,
): OpenAIError {
  return { error: { message, type, param, code } };
}

/**
 * `/compat/v1` errors in the OpenAI shape. Deterministic failures carry `x-should-retry: false` so
 * SDKs do not retry what cannot succeed: every 4xx, and 5xx answers about a query that ran (a retry
 * would start another query, and a timed-out one keeps running). Transient 5xx (broker unreachable,
 * API server write failed) stay retryable.
 */
export function sendOpenAIError(
  c: Context,
  status: ContentfulStatusCode,
  message: string,
  type: OpenAIErrorType,
  code: string | null = null,
  param: string | null = null,
  retryable = status >= 500 && status !== 501,
) {
  if (!retryable) c.header('x-should-retry', 'false');
  return c.json(openaiError(message, type, code, param), status);
}
