import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { KubeError } from '../kube/errors.ts';

/** The `/v1` error envelope: `{error: {code, message, requestId, details?}}`. */
export interface ErrorBody {
  error: { code: string; message: string; requestId?: string; details?: unknown };
}

export function requestIdOf(c: Context): string | undefined {
  return (c.get('requestId' as never) as string | undefined) ?? c.req.header('x-request-id') ?? undefined;
}

export function errorBody(c: Context, code: string, message: string, details?: unknown): ErrorBody {
  return {
    error: { code, message, requestId: requestIdOf(c), ...(details === undefined ? {} : { details }) },
  };
}

export function sendError(
  c: Context,
  status: ContentfulStatusCode,
  code: string,
  message: string,
  details?: unknown,
) {
  return c.json(errorBody(c, code, message, details), status);
}

const CODE_BY_REASON: Record<string, string> = {
  NotFound: 'not_found',
  AlreadyExists: 'already_exists',
  Conflict: 'conflict',
  Invalid: 'invalid',
  Forbidden: 'forbidden',
  Unauthorized: 'unauthorized',
  BadRequest: 'bad_request',
  Gone: 'gone',
  TooManyRequests: 'rate_limited',
  Timeout: 'timeout',
  Unavailable: 'kubernetes_unavailable',
};

/** Maps a Kubernetes failure to a clear status: 404, 409, 422 with field causes, 403, 503 … */
export function sendKubeError(c: Context, err: unknown, context: string) {
  const e = KubeError.from(err, context);
  const status = (e.code >= 400 && e.code < 600 ? e.code : 502) as ContentfulStatusCode;
  const causes = e.causes.map((x) => ({ field: x.field, reason: x.reason, message: x.message }));
  return sendError(
    c,
    status,
    CODE_BY_REASON[e.reason] ?? 'kubernetes_error',
    e.message,
    causes.length ? { causes } : undefined,
  );
}
