import { type CodeWithStatus, HttpError } from '../http/index.ts';

type ApiKeyStatus = 400 | 403 | 404 | 409 | 422 | 503;

/**
 * A failure of the API key service with the code its routes answer (the status is the code's, in
 * pkg/http's ERROR_CODES): an HttpError, so the routes' error handler renders it like any other.
 */
export class ApiKeyError extends HttpError {
  override name = 'ApiKeyError';
  declare readonly status: ApiKeyStatus;

  constructor(code: CodeWithStatus<ApiKeyStatus>, message: string) {
    super(code, message);
  }
}
