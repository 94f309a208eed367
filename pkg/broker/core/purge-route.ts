import { createRoute } from '@hono/zod-openapi';
import { type AnyOpenAPIHono, route } from '../../http/index.ts';

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
