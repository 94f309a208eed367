import type { Context, ErrorHandler, NotFoundHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { Logger } from '../../log/index.ts';
import { bodyTooLarge, isBodyAborted } from '../body-limit/index.ts';
import { jsonTooDeepOf } from '../json-body/index.ts';
import { requestIdOf } from '../request-id/index.ts';
import { HttpError, httpError, relayedError } from './codes.ts';
import { type ErrorMapper, type ErrorRenderer, INTERNAL_MESSAGE, renderEnvelope } from './envelope.ts';

export {
  type CodeWithStatus,
  ERROR_CODES,
  type ErrorCode,
  HttpError,
  type HttpErrorOptions,
  httpError,
  relayedError,
  type StatusOf,
  statusOf,
} from './codes.ts';
export {
  type ErrorBody,
  type ErrorMapper,
  type ErrorRenderer,
  envelope,
  errorBody,
  INTERNAL_MESSAGE,
  renderEnvelope,
} from './envelope.ts';

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
 * The 400 `invalid_request` of a zod failure, listing every issue, so a client sees all that is
 * wrong with its request at once (thrown by a handler that validates a body itself).
 */
export function validationError(zodIssues: IssueLike[]): HttpError {
  const issues = zodIssues
    .flatMap(flatten)
    .map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
  const summary = issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ');
  return httpError('invalid_request', `invalid request: ${summary}`, { issues });
}

/** `defaultHook` for OpenAPIHono: a zod failure answers `validationError`'s envelope. */
export function validationHook(
  result: { success: boolean; error?: { issues: IssueLike[] } },
  c: Context,
): Response | undefined {
  if (result.success || !result.error) return undefined;
  return renderEnvelope(c, validationError(result.error.issues));
}

export interface ErrorHandlerOptions {
  /** Asked in order for errors that are not HttpErrors; the first answer wins. */
  mappers?: ErrorMapper[];
  /** The response shape; the envelope by default. */
  render?: ErrorRenderer;
}

/**
 * `app.onError`, the one place a thrown error becomes a response: handlers throw (`httpError(code,
 * …)`, or what a mapper knows, e.g. a KubeError) and never catch only to report. Client faults keep their
 * 4xx (a body over the limit, or JSON nested too deep, surfaces as a read failure inside whatever
 * read it, so those flags are checked first); anything unknown is a 500 whose details stay in the log, tied to the
 * request id.
 */
export function errorHandler(logger: Logger, opts: ErrorHandlerOptions = {}): ErrorHandler {
  const mappers = opts.mappers ?? [];
  const render = opts.render ?? renderEnvelope;
  return (err, c) => {
    const known = classify(err, c, mappers);
    const where = { method: c.req.method, path: c.req.path, requestId: requestIdOf(c) };
    if (!known) {
      logger.error({ err, ...where }, 'unhandled error');
      return render(c, httpError('internal', INTERNAL_MESSAGE));
    }
    // A 5xx the code knows (an upstream that is down, a query that failed) is for operators to see,
    // but it is not a bug: warn, with what failed and no stack.
    if (known.status >= 500)
      logger.warn(
        { status: known.status, code: known.code, reason: err.message, error: err.name, ...where },
        'request failed',
      );
    for (const [name, value] of Object.entries(known.headers ?? {})) c.header(name, value);
    return render(c, known);
  };
}

function classify(err: Error, c: Context, mappers: ErrorMapper[]): HttpError | undefined {
  const tooLarge = bodyTooLarge(c);
  if (tooLarge) return httpError('payload_too_large', tooLarge);
  const tooDeep = jsonTooDeepOf(c);
  if (tooDeep) return httpError('json_too_deep', tooDeep);
  // A client gone mid-upload is not a server fault: no error log with a stack for each one (a client
  // could fill the log that way), and the access log records a 400 nobody receives.
  if (isBodyAborted(err))
    return httpError('invalid_request', 'the request body ended early: the client closed the connection');
  if (err instanceof HttpError) return err;
  for (const map of mappers) {
    const mapped = map(err);
    if (mapped) return mapped;
  }
  if (err instanceof HTTPException && err.status < 500) {
    // Hono's JSON validator says "Malformed JSON in request body"; a hand-parsed body throws SyntaxError.
    const code = err.message.startsWith('Malformed JSON') ? 'invalid_json' : 'invalid_request';
    // Hono's own status (a 400 from its validators) is kept.
    return relayedError(err.status, code, err.message || 'invalid request');
  }
  if (err instanceof SyntaxError) return httpError('invalid_json', `malformed JSON: ${err.message}`);
  return undefined;
}

export const notFoundHandler: NotFoundHandler = (c) =>
  renderEnvelope(c, httpError('not_found', `no route for ${c.req.method} ${c.req.path}`));
