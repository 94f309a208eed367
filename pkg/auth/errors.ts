import { HttpError } from '../http/index.ts';

/**
 * A failure of the API key service with the status and code its routes answer: an HttpError, so
 * the routes' error handler (pkg/http) renders it like any other.
 */
export class ApiKeyError extends HttpError {
  override name = 'ApiKeyError';
  declare readonly status: 400 | 403 | 404 | 409 | 422 | 503;

  constructor(status: ApiKeyError['status'], code: string, message: string) {
    super(status, code, message);
  }
}
