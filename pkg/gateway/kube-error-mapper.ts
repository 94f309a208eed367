import type { ErrorHandler } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { type ErrorCode, errorHandler, type HttpError, httpError, relayedError } from '../http/index.ts';
import { KubeError, type KubeReason } from '../kube/errors.ts';
import type { Logger } from '../log/index.ts';

/** The code of each reason; its status is the code's (ERROR_CODES), the one the reason stands for. */
const CODE_BY_REASON: Record<Exclude<KubeReason, 'Unknown'>, ErrorCode> = {
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
    return httpError(
      'invalid_resource_version',
      `metadata.resourceVersion is not acceptable: give one the API server issued (an unsigned decimal number), and none when creating (${err.message})`,
    );
  if (err.reason === 'TooLarge')
    return httpError(
      'object_too_large',
      `the object would be larger than the API server stores (about 1.5 MiB; a merge patch adds to what is there): ${err.message}`,
    );
  const causes = err.causes.map((x) => ({ field: x.field, reason: x.reason, message: x.message }));
  const details = causes.length ? { causes } : undefined;
  if (err.reason === 'Unknown') {
    // No code names it: the API server's own status, passed on; anything outside 4xx/5xx (a network
    // failure reported as 0, a redirect) is a bad gateway.
    const status = (err.code >= 400 && err.code < 600 ? err.code : 502) as ContentfulStatusCode;
    return relayedError(status, 'kubernetes_error', err.message, details);
  }
  const code = CODE_BY_REASON[err.reason];
  // The API server out of reach is transient (a restart, a network blip): say when to retry.
  const headers = code === 'kubernetes_unavailable' ? { 'retry-after': '1' } : undefined;
  return httpError(code, err.message, details, { headers });
}

/** The API service's `onError`: the shared handler of pkg/http, knowing KubeErrors. */
export function gatewayErrorHandler(logger: Logger): ErrorHandler {
  return errorHandler(logger, { mappers: [kubeErrorToHttp] });
}
