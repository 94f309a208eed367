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
  TooLarge: 'object_too_large',
  Timeout: 'timeout',
  Unavailable: 'kubernetes_unavailable',
  Unknown: 'kubernetes_error',
};

/**
 * Two faults in a caller's `metadata.resourceVersion` that the API server answers with a 500
 * InternalError rather than a 4xx: one its storage cannot parse as an unsigned integer (quoting
 * the parser), and one given on a create. The value is the caller's, so the answer is a 400.
 */
const CALLER_RESOURCE_VERSION =
  /strconv\.ParseUint: parsing "|resourceVersion should not be set on objects to be created/;

/**
 * The one place a Kubernetes failure becomes an HTTP answer for `/v1`: the API server's status
 * (404, 409, 422 with the field causes, 403, 503 when it cannot be reached …) and a stable code, so
 * route handlers just let a KubeError propagate.
 */
export function kubeErrorToHttp(err: Error): HttpError | undefined {
  if (!(err instanceof KubeError)) return undefined;
  if (err.code === 500 && CALLER_RESOURCE_VERSION.test(err.message))
    return new HttpError(
      400,
      'invalid_resource_version',
      `metadata.resourceVersion is not acceptable: give one the API server issued (an unsigned decimal number), and none when creating (${err.message})`,
    );
  if (err.reason === 'TooLarge')
    return new HttpError(
      413,
      CODE_BY_REASON.TooLarge,
      `the object would be larger than the API server stores (about 1.5 MiB; a merge patch adds to what is there): ${err.message}`,
    );
  // Anything outside 4xx/5xx (a network failure reported as 0, a redirect) is a bad gateway.
  const status = (err.code >= 400 && err.code < 600 ? err.code : 502) as ContentfulStatusCode;
  const causes = err.causes.map((x) => ({ field: x.field, reason: x.reason, message: x.message }));
  return new HttpError(
    status,
    CODE_BY_REASON[err.reason] ?? 'kubernetes_error',
    err.message,
    causes.length ? { causes } : undefined,
    // The API server out of reach is transient (a restart, a network blip): say when to retry.
    status === 503 ? { 'retry-after': '1' } : undefined,
  );
}

/** The API service's `onError`: the shared handler of pkg/http, knowing KubeErrors. */
export function gatewayErrorHandler(logger: Logger): ErrorHandler {
  return errorHandler(logger, { mappers: [kubeErrorToHttp] });
}
