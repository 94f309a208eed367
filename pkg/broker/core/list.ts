import { z } from 'zod';

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;

const seqParam = (name: string) =>
  z
    .string()
    .regex(/^\d{1,15}$/, `${name} must be a non-negative integer (a sequence number)`)
    .transform(Number)
    .optional();

export const limitParam = z
  .string()
  .regex(/^\d{1,7}$/, 'limit must be a positive integer')
  .transform(Number)
  .pipe(
    z.number().int().min(1, 'limit must be at least 1').max(MAX_LIMIT, `limit must be at most ${MAX_LIMIT}`),
  )
  .optional();

export const boolParam = z
  .enum(['true', 'false', '1', '0'], { message: 'must be true or false' })
  .transform((v) => v === 'true' || v === '1')
  .optional();

/** The parameters every list endpoint takes (conventions of the spec). */
export const listQueryShape = {
  limit: limitParam,
  cursor: seqParam('cursor'),
  watch: boolParam,
  'from-beginning': boolParam,
};

export const listQuery = z.object(listQueryShape);
export type ListQuery = z.infer<typeof listQuery>;

export const offsetParam = z
  .string()
  .regex(/^\d{1,9}$/, 'offset must be a non-negative integer')
  .transform(Number)
  .optional();

/** A path parameter naming one record (`{queryId}`, `{traceId}`, ...): every domain's routes have some. */
export const idParam = <K extends string>(name: K) =>
  z.object({ [name]: z.string().min(1).max(256) } as Record<K, z.ZodString>);

/** `{items,total,hasMore,nextCursor}` built from already-serialized items (no re-serialization). */
export function listJson(
  items: readonly string[],
  total: number,
  hasMore: boolean,
  nextCursor: number,
  extra = '',
): string {
  return `{"items":[${items.join(',')}],"total":${total},"hasMore":${hasMore},"nextCursor":${nextCursor}${extra}}`;
}

export function jsonResponse(body: string, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(body, { status, headers: { 'content-type': 'application/json', ...headers } });
}

/** A page of a sequence-ordered store as the list envelope; `nextCursor` stays put on an empty page. */
export function pageResponse<T extends { seq: number }>(
  page: { items: readonly T[]; total: number; hasMore: boolean },
  json: (item: T) => string,
  cursor: number,
): Response {
  const items = page.items.map(json);
  return jsonResponse(listJson(items, page.total, page.hasMore, page.items.at(-1)?.seq ?? cursor));
}
