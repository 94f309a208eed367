import type { Context } from 'hono';
import type { z } from 'zod';
import { HttpError, parseJsonBody, requireMediaType, sendError, validationHook } from '../../http/index.ts';

/** 415 for a JSON route that received another media type (the body is optional when `optional`). */
export const jsonOnly = (optional = false) =>
  requireMediaType(
    ['application/json'],
    (c, message) => sendError(c, 415, 'unsupported_media_type', message),
    optional,
  );

/**
 * An optional JSON body (memory clients POST /conversations with no body, or with an empty one
 * labelled JSON): empty → undefined; otherwise parsed and validated, failures as 400 envelopes.
 */
export async function optionalJsonBody<T>(
  c: Context,
  schema: z.ZodType<T>,
): Promise<{ ok: true; value: T | undefined } | { ok: false; res: Response }> {
  const text = (await c.req.text()).trim();
  if (!text) return { ok: true, value: undefined };
  let raw: unknown;
  try {
    raw = parseJsonBody(c, text); // trimmed: the same depth as the text the middleware checked
  } catch (err) {
    if (err instanceof HttpError) throw err; // too deep: the error handler answers
    return { ok: false, res: sendError(c, 400, 'invalid_json', `malformed JSON: ${(err as Error).message}`) };
  }
  const r = schema.safeParse(raw);
  if (r.success) return { ok: true, value: r.data };
  return { ok: false, res: validationHook({ success: false, error: r.error }, c) as Response };
}
