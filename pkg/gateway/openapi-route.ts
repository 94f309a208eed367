import type { OpenAPIHono, RouteConfig, RouteHandler } from '@hono/zod-openapi';

// biome-ignore lint/suspicious/noExplicitAny: routes mount on apps with any Env
export type AnyOpenAPIHono = OpenAPIHono<any, any, any>;

/**
 * Registers a documented, validated route whose handler may answer with any Response. The typed
 * response map of @hono/zod-openapi cannot express our shared error envelope on every status.
 */
export function route<R extends RouteConfig>(
  app: AnyOpenAPIHono,
  config: R,
  handler: (c: Parameters<RouteHandler<R>>[0]) => Response | Promise<Response>,
): void {
  app.openapi(config, handler as unknown as RouteHandler<R>);
}
