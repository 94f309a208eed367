import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

/**
 * The `/v1` error envelope `{error: {code, message, requestId?, details?}}`. pkg/auth sits below
 * the gateway in the dependency order, so it renders the envelope itself rather than importing it.
 */
export function authErrorResponse(
  c: Context,
  status: ContentfulStatusCode,
  code: string,
  message: string,
  details?: unknown,
): Response {
  const requestId = (c.get('requestId' as never) as string | undefined) ?? c.req.header('x-request-id');
  return c.json(
    {
      error: {
        code,
        message,
        ...(requestId ? { requestId } : {}),
        ...(details === undefined ? {} : { details }),
      },
    },
    status,
  );
}

/** A failure with an HTTP status, thrown by the API key service and rendered by its routes. */
export class ApiKeyError extends Error {
  readonly status: 400 | 404 | 409 | 422 | 503;
  readonly code: string;

  constructor(status: ApiKeyError['status'], code: string, message: string) {
    super(message);
    this.name = 'ApiKeyError';
    this.status = status;
    this.code = code;
  }
}
