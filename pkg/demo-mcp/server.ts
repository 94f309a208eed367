/**
 * The demo MCP server (`berth up` starts it; docs/mcp.md): the tools of tools.ts over streamable
 * HTTP at `/mcp`, both revisions from one factory through `@modelcontextprotocol/server` 2.x —
 * 2026-07-28 natively, 2025-era clients through the SDK's stateless fallback. Built on pkg/http
 * (request id, body limit, depth limit, one error envelope). It listens on loopback only and checks
 * `Host` and `Origin` (DNS rebinding): the engine of the same `berth up` is its one client.
 */
import { OpenAPIHono } from '@hono/zod-openapi';
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  originValidationResponse,
} from '@modelcontextprotocol/server';
import {
  bodyLimit,
  errorHandler,
  jsonDepthLimit,
  listenHttp,
  mediaTypeOf,
  mountHealthRoutes,
  notFoundHandler,
  parseJsonBody,
  requestId,
  validationHook,
} from '../http/index.ts';
import type { Logger } from '../log/index.ts';
import { demoMcpServer } from './tools.ts';

/** The default port of `berth up --demo-mcp-port`. */
export const DEMO_MCP_PORT = 8090;
const BODY_LIMIT = 1024 * 1024;

export interface RunningDemoMcp {
  /** The MCP endpoint, e.g. http://127.0.0.1:8090/mcp: an MCPServer's `spec.address.value`. */
  url: string;
  port: number;
  close(): Promise<void>;
}

export function demoMcpApp(logger: Logger, now?: () => Date) {
  const handler = createMcpHandler(() => demoMcpServer(now), {
    maxRequestBodySize: BODY_LIMIT,
    onerror: (err) => logger.debug({ err: err.message }, 'demo MCP request refused'),
  });
  const app = new OpenAPIHono({ defaultHook: validationHook });
  app.use('*', requestId());
  app.use('*', bodyLimit(BODY_LIMIT));
  app.use('*', jsonDepthLimit());
  app.onError(errorHandler(logger));
  app.notFound(notFoundHandler);
  mountHealthRoutes(app, {
    what: 'the demo MCP server',
    readiness: () => ({ ready: true }),
    document: false,
  });
  app.all('/mcp', async (c) => {
    const refused =
      hostHeaderValidationResponse(c.req.raw, localhostAllowedHostnames()) ??
      originValidationResponse(c.req.raw, localhostAllowedOrigins());
    if (refused) return refused;
    // A JSON body was read by the depth limit: hand it over parsed (a SyntaxError is a 400). Any
    // other media type stays unread, for the SDK to refuse with 415.
    const json = c.req.method === 'POST' && mediaTypeOf(c) === 'application/json';
    const parsedBody = json ? parseJsonBody(c, await c.req.text()) : undefined;
    return handler.fetch(c.req.raw, json ? { parsedBody } : undefined);
  });
  return { app, handler };
}

/** Starts the demo MCP server on loopback (`port` 0: any free port). */
export async function startDemoMcpServer(opts: { port: number; logger: Logger }): Promise<RunningDemoMcp> {
  const { app, handler } = demoMcpApp(opts.logger);
  const l = await listenHttp(app.fetch, { port: opts.port });
  opts.logger.info({ port: l.port }, 'demo MCP server listening');
  return {
    url: `${l.url}/mcp`,
    port: l.port,
    close: async () => {
      await handler.close();
      await l.close();
    },
  };
}
