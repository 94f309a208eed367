/**
 * Paged, sorted and filtered lists of a kind (`?limit=&continue=&sort=&q=`): the dashboard shows
 * 1,000 queries a page at a time. The informer cache holds the whole list, so a page is cut from
 * it here; `continue` is a keyset token (the last item's sort key and name), so objects created or
 * deleted between two pages neither repeat nor shift the next page. Without any of the four
 * parameters the list comes whole, as before (its cached bytes, ETag and gzip).
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { z } from 'zod';
import { httpError } from '../../http/index.ts';

export const LIST_SORTS = ['name', '-name', 'created', '-created'] as const;
export type ListSort = (typeof LIST_SORTS)[number];
export const MAX_PAGE = 1000;

export const pageQuery = z.object({
  limit: z
    .string()
    .regex(/^\d{1,4}$/, 'limit must be an integer 1..1000')
    .transform(Number)
    .refine((n) => n >= 1 && n <= MAX_PAGE, 'limit must be an integer 1..1000')
    .optional()
    .openapi({ description: 'page size, 1..1000 (default: the whole list)' }),
  continue: z
    .string()
    .max(2048)
    .optional()
    .openapi({ description: 'the `continue` of the previous page (same sort and q)' }),
  sort: z
    .enum(LIST_SORTS)
    .optional()
    .openapi({ description: 'name (default), created (oldest first); "-" reverses' }),
  q: z.string().max(253).optional().openapi({ description: 'keeps objects whose name contains this text' }),
});
export type PageQuery = z.infer<typeof pageQuery>;

export const pagedListResponse = z.object({
  items: z.array(z.record(z.string(), z.unknown())),
  count: z.number().int().describe('items on this page'),
  total: z.number().int().optional().describe('objects matching q (paged lists)'),
  continue: z.string().optional().describe('present when more follow: pass it to get the next page'),
});

export const isPaged = (q: PageQuery) =>
  q.limit !== undefined || q.continue !== undefined || q.sort !== undefined || q.q !== undefined;

type Key = [string, string];
const keyOf = (o: KubernetesObject, sort: ListSort): Key => {
  const name = o.metadata?.name ?? '';
  const created = String(o.metadata?.creationTimestamp ?? '');
  return sort === 'name' || sort === '-name' ? [name, name] : [created, name];
};
const compare = (a: Key, b: Key) =>
  a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0;

interface Token {
  k: Key;
  s: ListSort;
  q: string;
}

function encode(t: Token): string {
  return Buffer.from(JSON.stringify(t)).toString('base64url');
}

function decode(raw: string, sort: ListSort, q: string): Key {
  let t: Partial<Token>;
  try {
    t = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Partial<Token>;
  } catch {
    throw httpError('invalid_request', 'continue is not a token this API gave');
  }
  const k = t?.k;
  if (!Array.isArray(k) || k.length !== 2 || !k.every((x) => typeof x === 'string'))
    throw httpError('invalid_request', 'continue is not a token this API gave');
  if (t.s !== sort || t.q !== q)
    throw httpError('invalid_request', 'continue belongs to another sort or q: start again without it');
  return k as Key;
}

/** One page of `objects` (any order) as `query` asks. */
export function pageOf(objects: KubernetesObject[], query: PageQuery) {
  const sort = query.sort ?? 'name';
  const q = query.q ?? '';
  const sign = sort.startsWith('-') ? -1 : 1;
  const matching = q ? objects.filter((o) => (o.metadata?.name ?? '').includes(q)) : objects;
  const keyed = matching.map((o) => ({ o, k: keyOf(o, sort) }));
  keyed.sort((a, b) => sign * compare(a.k, b.k));
  let start = 0;
  if (query.continue !== undefined) {
    const after = decode(query.continue, sort, q);
    start = keyed.findIndex((e) => sign * compare(e.k, after) > 0);
    if (start < 0) start = keyed.length;
  }
  const limit = query.limit ?? MAX_PAGE;
  const page = keyed.slice(start, start + limit);
  const last = page.at(-1);
  const more = start + limit < keyed.length && last;
  return {
    items: page.map((e) => e.o),
    total: matching.length,
    ...(more ? { continue: encode({ k: last.k, s: sort, q }) } : {}),
  };
}
