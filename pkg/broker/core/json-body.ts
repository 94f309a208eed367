import type { Context } from 'hono';
import type { z } from 'zod';
import {
  httpError,
  parseJsonBody,
  renderEnvelope,
  requireMediaType,
  validationError,
} from '../../http/index.ts';

/** 415 for a JSON route that received another media type (the body is optional when `optional`). */
export const jsonOnly = (optional = false) =>
  requireMediaType(
    ['application/json'],
    (c, message) => renderEnvelope(c, httpError('unsupported_media_type', message)),
    optional,
  );

/**
 * An optional JSON body (memory clients POST /conversations with no body, or with an empty one
 * labelled JSON): empty → undefined; otherwise parsed and validated. Malformed JSON throws a
 * SyntaxError (the error handler's 400 `invalid_json`), JSON nested too deep the 400 `json_too_deep`,
 * a value the schema refuses the 400 `invalid_request` listing every issue.
 */
export async function optionalJsonBody<T>(c: Context, schema: z.ZodType<T>): Promise<T | undefined> {
  const text = (await c.req.text()).trim();
  if (!text) return undefined;
  // Trimmed: the same depth as the text the middleware checked.
  const r = schema.safeParse(parseJsonBody(c, text));
  if (!r.success) throw validationError(r.error.issues);
  return r.data;
}
