import type { Context, ErrorHandler, NotFoundHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Logger } from '../../log/index.ts';
import { bodyTooLarge } from '../body-limit/index.ts';
import { requestIdOf } from '../request-id/index.ts';

/** The shared error envelope of the broker and `/v1`: `{error: {code, message, requestId, details?}}`. */
export interface ErrorBody {
  error: { code: string; message: string; requestId?: string; details?: unknown };
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
): Response {
  return c.json(errorBody(c, code, message, details), status);
}

interface IssueLike {
  path: PropertyKey[];
  message: string;
  code?: string;
  errors?: IssueLike[][];
}

const typeMismatchAtRoot = (branch: IssueLike[]) =>
  branch.length === 1 && branch[0]?.code === 'invalid_type' && branch[0].path.length === 0;

/**
 * zod reports a failed union as one bare "Invalid input". When exactly one alternative had the
 * input's shape (e.g. an array where either an object or an array is allowed), its own issues are
 * what is wrong; when none had, the alternatives' expectations are listed.
 */
function flatten(issue: IssueLike): IssueLike[] {
  if (issue.code !== 'invalid_union' || !issue.errors?.length) return [issue];
  const shaped = issue.errors.filter((b) => !typeMismatchAtRoot(b));
  if (shaped.length === 1)
    return (shaped[0] as IssueLike[]).flatMap((i) => flatten({ ...i, path: [...issue.path, ...i.path] }));
  if (shaped.length === 0) {
    const expected = issue.errors.map((b) => b[0]?.message.replace(/^Invalid input: /, '')).join(' or ');
    return [{ path: issue.path, message: `invalid input: ${expected}` }];
  }
  return [issue];
}

/**
 * `defaultHook` for OpenAPIHono: a zod failure becomes a 400 envelope that lists every issue, so a
 * client sees all that is wrong with its request at once.
 */
export function validationHook(
  result: { success: boolean; error?: { issues: IssueLike[] } },
  c: Context,
): Response | undefined {
  if (result.success || !result.error) return undefined;
  const issues = result.error.issues
    .flatMap(flatten)
    .map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
  const summary = issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ');
  return sendError(c, 400, 'invalid_request', `invalid request: ${summary}`, { issues });
}

/**
 * `app.onError`: client faults keep their 4xx (a body over the limit surfaces as a read failure
 * inside the JSON validator, so the body-limit flag is checked first); anything else is a 500 whose
 * details stay in the log, tied to the request id.
 */
export function errorHandler(logger: Logger): ErrorHandler {
  return (err, c) => {
    if (bodyTooLarge(c)) return sendError(c, 413, 'payload_too_large', bodyTooLarge(c) as string);
    if (err instanceof HTTPException && err.status < 500) {
      const code = err.message.startsWith('Malformed JSON') ? 'invalid_json' : 'invalid_request';
      return sendError(c, err.status, code, err.message || 'invalid request');
    }
    if (err instanceof SyntaxError)
      return sendError(c, 400, 'invalid_json', `malformed JSON: ${err.message}`);
    logger.error(
      { err, method: c.req.method, path: c.req.path, requestId: requestIdOf(c) },
      'unhandled error',
    );
    return sendError(c, 500, 'internal', 'internal error; see the server log with this request id');
  };
}

export const notFoundHandler: NotFoundHandler = (c) =>
  sendError(c, 404, 'not_found', `no route for ${c.req.method} ${c.req.path}`);
