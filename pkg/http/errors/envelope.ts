import type { Context } from 'hono';
import { requestIdOf } from '../request-id/index.ts';
import type { HttpError } from './codes.ts';

/** The shared error envelope of the broker and `/v1`: `{error: {code, message, requestId, details?}}`. */
export interface ErrorBody {
  error: { code: string; message: string; requestId?: string; details?: unknown };
}

export function errorBody(c: Context, code: string, message: string, details?: unknown): ErrorBody {
  return envelope(code, message, requestIdOf(c), details);
}

/** The envelope for a request id at hand, without a Hono context (probes answered on the socket). */
export function envelope(
  code: string,
  message: string,
  requestId: string | undefined,
  details?: unknown,
): ErrorBody {
  return { error: { code, message, requestId, ...(details === undefined ? {} : { details }) } };
}

/** What a 500 says: the cause stays in the log, found by the request id. */
export const INTERNAL_MESSAGE = 'internal error; see the server log with this request id';

/** Turns an error a lower layer throws (say, a KubeError) into an HttpError; undefined when not its kind. */
export type ErrorMapper = (err: Error) => HttpError | undefined;

/** Writes an HttpError in a surface's own shape; the envelope unless a sub-app says otherwise. */
export type ErrorRenderer = (c: Context, err: HttpError) => Response;

/**
 * The envelope of an HttpError, written at once: the error handler's default renderer, and the way
 * to answer what Hono wants as a Response (a validation hook, a refusing middleware).
 */
export const renderEnvelope: ErrorRenderer = (c, err) =>
  c.json(errorBody(c, err.code, err.message, err.details), err.status);
