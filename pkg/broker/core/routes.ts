import { createRoute } from '@hono/zod-openapi';
import type { z } from 'zod';
import { type AnyOpenAPIHono, route } from '../../http/index.ts';

/**
 * A domain's routes as app.ts mounts them, with the routes (OpenAPI paths, `{param}`) on which a
 * request repeated with the same Idempotency-Key is answered again instead of run again.
 */
export interface DomainRoutes<D> {
  mount(app: AnyOpenAPIHono, deps: D): void;
  /** The Query finalizer's purges (DELETE): one repeated after a controller's death, on any replica. */
  purges?: readonly string[];
  /** The engine's memory writes (POST): one resent after a connection closed under it (a replica draining). */
  writes?: readonly string[];
}

/** A route's OpenAPI path (`/events/{queryId}`) as Hono matches it (`/events/:queryId`). */
export const honoPath = (path: string) => path.replace(/\{([^}]+)\}/g, ':$1');

/** `DELETE <path>`: purge a whole domain, answering `{deleted}` (sequences are never reused). */
export function mountPurgeAll(
  app: AnyOpenAPIHono,
  opts: { path: string; tags: string[]; summary: string; purge: () => Promise<number> | number },
): void {
  route(
    app,
    createRoute({
      method: 'delete',
      path: opts.path,
      tags: opts.tags,
      summary: opts.summary,
      responses: { 200: { description: '{deleted}' } },
    }),
    async (c) => c.json({ deleted: await opts.purge() }, 200),
  );
}

/** `GET <path>` of a list: the list query (paging, watch) validated, the envelope or SSE documented. */
export function listRoute<Q extends z.ZodObject>(o: {
  path: string;
  tags: string[];
  summary: string;
  query: Q;
  description: string;
}) {
  return createRoute({
    method: 'get',
    path: o.path,
    tags: o.tags,
    summary: o.summary,
    request: { query: o.query },
    responses: { 200: { description: o.description } },
  });
}
