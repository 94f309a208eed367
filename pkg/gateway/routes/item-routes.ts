import type { Context } from 'hono';
import type { z } from 'zod';
import { type AnyOpenAPIHono, route } from '../../http/index.ts';
import { type itemParams, itemRoute, itemWriteRoute, type Ok } from './resource-schemas.ts';

export type ItemKey = z.output<typeof itemParams>;

/**
 * The routes on one object path of a family (`…/{namespace}/…/{name}`): the path, tags, parameter
 * checks and error documentation are written once; handlers get the validated key (and body).
 */
export function itemRoutes(app: AnyOpenAPIHono, path: string, tags: string[]) {
  return {
    read(method: 'get' | 'delete', ok: Ok, handler: (c: Context, key: ItemKey) => Promise<Response>) {
      route(app, itemRoute({ method, path, tags, ok }), (c) => handler(c, c.req.valid('param')));
    },
    write<B extends z.ZodType>(
      method: 'put' | 'patch',
      body: B,
      ok: Ok,
      handler: (c: Context, key: ItemKey, body: z.output<B>) => Promise<Response>,
    ) {
      // Typed as a plain schema here: the route helper's inference does not survive a generic body.
      const schema: z.ZodType = body;
      route(app, itemWriteRoute({ method, path, tags, body: schema, ok }), (c) =>
        handler(c, c.req.valid('param'), c.req.valid('json') as z.output<B>),
      );
    },
  };
}
