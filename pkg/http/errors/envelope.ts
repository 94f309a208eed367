import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { requestIdOf } from '../request-id/index.ts';
import type { ErrorCode } from './codes.ts';

/** The shared error envelope of the broker and `/v1`: `{error: {code, message, requestId, details?}}`. */
export interface ErrorBody {
  error: { code: string; message: string; requestId?: string; details?: unknown };
}

export function errorBody(c: Context, code: string, message: string, details?: unknown): ErrorBody {
  return {
    error: { code, message, requestId: requestIdOf(c), ...(details === undefined ? {} : { details }) },
  };
}

/**
 * The envelope written at once, with a status given by hand. What a handler reports it throws
 * instead (`httpError`, codes.ts); the broker's routes still answer this way (issue 28: to convert).
 */
export function sendError(
  c: Context,
  status: ContentfulStatusCode,
  code: string,
  message: string,
  details?: unknown,
): Response {
  return c.json(errorBody(c, code, message, details), status);
}

/**
 * A failure a handler throws instead of answering itself: the app's one error handler renders it
 * (as the envelope, or in a sub-app's own shape), so no handler needs a try/catch to report one.
 * Made with `httpError(code, …)` (codes.ts), which takes the status from ERROR_CODES; the
 * constructor, which takes any status and code, remains for the broker and /compat/v1 until they
 * are converted.
 */
export class HttpError extends Error {
  override name = 'HttpError';
  readonly status: ContentfulStatusCode;
  readonly code: ErrorCode;
  readonly details?: unknown;
  /** Response headers the error handler adds (e.g. `retry-after` on a 503). */
  readonly headers?: Record<string, string>;

  constructor(
    status: ContentfulStatusCode,
    code: ErrorCode,
    message: string,
    details?: unknown,
    headers?: Record<string, string>,
  ) {
    super(message);
    this.status = status;
    this.code = code;
    if (details !== undefined) this.details = details;
    if (headers !== undefined) this.headers = headers;
  }
}

/** Turns an error a lower layer throws (say, a KubeError) into an HttpError; undefined when not its kind. */
export type ErrorMapper = (err: Error) => HttpError | undefined;

/** Writes an HttpError in a surface's own shape; the envelope unless a sub-app says otherwise. */
export type ErrorRenderer = (c: Context, err: HttpError) => Response;

export const renderEnvelope: ErrorRenderer = (c, err) =>
  sendError(c, err.status, err.code, err.message, err.details);
