import type { ErrorHandler } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { errorHandler, HttpError } from '../http/index.ts';
import { KubeError, type KubeReason } from '../kube/errors.ts';
import type { Logger } from '../log/index.ts';

const CODE_BY_REASON: Record<KubeReason, string> = {
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
  Unknown: 'kubernetes_error',
};

/**
 * The one place a Kubernetes failure becomes an HTTP answer for `/v1`: the API server's status
 * (404, 409, 422 with the field causes, 403, 503 when it cannot be reached …) and a stable code, so
 * route handlers just let a KubeError propagate.
 */
export function kubeErrorToHttp(err: Error): HttpError | undefined {
  if (!(err instanceof KubeError)) return undefined;
  // Anything outside 4xx/5xx (a network failure reported as 0, a redirect) is a bad gateway.
  const status = (err.code >= 400 && err.code < 600 ? err.code : 502) as ContentfulStatusCode;
  const causes = err.causes.map((x) => ({ field: x.field, reason: x.reason, message: x.message }));
  return new HttpError(
    status,
    CODE_BY_REASON[err.reason] ?? 'kubernetes_error',
    err.message,
    causes.length ? { causes } : undefined,
  );
}

/** The API service's `onError`: the shared handler of pkg/http, knowing KubeErrors. */
export function gatewayErrorHandler(logger: Logger): ErrorHandler {
  return errorHandler(logger, { mappers: [kubeErrorToHttp] });
}
