import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { OpenAPIHono, RouteConfig, RouteHandler } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import { z } from 'zod';
import { validationHook } from '../errors/index.ts';
import { parseJsonBody } from '../json-body/index.ts';

// biome-ignore lint/suspicious/noExplicitAny: routes mount on apps with any Env
export type AnyOpenAPIHono = OpenAPIHono<any, any, any>;

/**
 * Registers a documented, validated route whose handler may answer with any Response (the typed
 * response map cannot express the shared error envelope or an SSE stream on every status).
 */
export function route<R extends RouteConfig>(
  app: AnyOpenAPIHono,
  config: R,
  handler: (c: Parameters<RouteHandler<R>>[0]) => Response | Promise<Response>,
): void {
  app.openapi(config, handler as unknown as RouteHandler<R>);
}

/**
 * A documented route whose JSON body is validated by `schema.safeParse` in the handler's own step.
 * @hono/zod-openapi validates through an extra middleware with an asynchronous parse, which costs
 * about an eighth of the throughput of a small ingest request; the broker's hot write routes
 * (`POST /messages`, `POST /events`) use this instead. Same schema, same 400 envelope, same docs.
 * Malformed or too deeply nested JSON throws from `parseJson` and becomes a 400 in the shared error
 * handler, whatever media type the body was labelled with. Literal
 * paths only (OpenAPI `{param}` templates are not translated to Hono `:param`).
 */
export function jsonBodyRoute<S extends z.ZodType>(
  app: AnyOpenAPIHono,
  config: RouteConfig & { method: 'post' | 'put' | 'patch' },
  schema: S,
  handler: (c: Context, body: z.output<S>) => Response | Promise<Response>,
  middleware: MiddlewareHandler[] = [],
): void {
  app.openAPIRegistry.registerPath({
    ...config,
    request: { ...config.request, body: { content: { 'application/json': { schema } }, required: true } },
  });
  const validated: MiddlewareHandler = async (c) => {
    const parsed = schema.safeParse(parseJsonBody(c, await c.req.text()));
    if (!parsed.success) return validationHook(parsed, c) as Response;
    return handler(c, parsed.data);
  };
  app.on([config.method.toUpperCase()], [config.path], ...middleware, validated);
}

const issue = z.object({ path: z.string(), message: z.string() });

/**
 * The error envelope for OpenAPI responses. `details` is what the validation hook fills
 * (`issues`) unless a surface documents more of its own (the gateway adds Kubernetes `causes`).
 */
export function errorEnvelopeSchema(details: z.ZodType = z.object({ issues: z.array(issue).optional() })) {
  return z.object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      requestId: z.string().optional(),
      details: details.optional(),
    }),
  });
}

/** `details.issues` as the validation hook fills it, for surfaces that extend `details`. */
export const issuesSchema = z.array(issue);

const ASSETS = new Map([
  ['swagger-ui.css', 'text/css; charset=utf-8'],
  ['swagger-ui-bundle.js', 'application/javascript; charset=utf-8'],
  ['swagger-ui-standalone-preset.js', 'application/javascript; charset=utf-8'],
]);

/** Interactive docs from the installed swagger-ui-dist: no CDN, so it works offline and air-gapped. */
export function mountDocsPage(app: AnyOpenAPIHono, path: string, specUrl: string, title: string): void {
  const dir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const cache = new Map<string, Buffer>();
  app.get(`${path}/assets/:file`, async (c) => {
    const file = c.req.param('file');
    const type = ASSETS.get(file);
    if (!type) return c.notFound();
    let body = cache.get(file);
    if (!body) {
      // Taken at use: a server whose docs page is never opened does not load fs/promises.
      body = await process.getBuiltinModule('node:fs/promises').readFile(join(dir, file));
      cache.set(file, body);
    }
    return c.body(new Uint8Array(body), 200, {
      'content-type': type,
      'cache-control': 'public, max-age=86400',
    });
  });
  app.get(path, (c) =>
    c.html(`<!doctype html><html><head><meta charset="utf-8"><title>${title}</title>
<link rel="stylesheet" href="${path}/assets/swagger-ui.css"></head><body><div id="ui"></div>
<script src="${path}/assets/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: ${JSON.stringify(specUrl)}, dom_id: '#ui' });</script></body></html>`),
  );
}
