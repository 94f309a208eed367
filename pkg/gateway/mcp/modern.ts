/**
 * Revision 2026-07-28 of `/mcp` through `@modelcontextprotocol/server` 2.x: stateless, one fresh
 * McpServer per request (the SDK's per-request transport), `server/discover` instead of a
 * handshake, the version and client info in each request's `_meta`. `legacy: 'reject'`: 2025-era
 * requests never reach this handler (index.ts routes them to legacy.ts, which keeps sessions).
 */
import { createMcpHandler, type McpHttpHandler, McpServer } from '@modelcontextprotocol/server';
import type { GatewayDeps } from '../deps.ts';
import {
  INSTRUCTIONS,
  invokeTargetTool,
  listTargetsTool,
  progressVia,
  runInvokeTarget,
  runListTargets,
  serverInfo,
} from './tools.ts';

export interface ModernOptions {
  waitTimeoutMs: number;
  maxBodyBytes: number;
}

export function modernHandler(deps: GatewayDeps, opts: ModernOptions): McpHttpHandler {
  const build = () => {
    const server = new McpServer(serverInfo(deps), { instructions: INSTRUCTIONS });
    server.registerTool(listTargetsTool.name, listTargetsTool.config, () => runListTargets(deps));
    server.registerTool(invokeTargetTool.name, invokeTargetTool.config, (args, ctx) =>
      runInvokeTarget(deps, args, {
        signal: ctx.mcpReq.signal,
        waitTimeoutMs: opts.waitTimeoutMs,
        progress: progressVia(ctx.mcpReq._meta?.progressToken, (n) => ctx.mcpReq.notify(n)),
      }),
    );
    return server;
  };
  return createMcpHandler(build, {
    legacy: 'reject',
    // A single JSON body unless a progress notification comes first: then SSE.
    responseMode: 'auto',
    maxRequestBodySize: opts.maxBodyBytes,
    // Rejections are answered (4xx JSON-RPC errors); the log says why, at debug.
    onerror: (err) => deps.logger.debug({ err: err.message }, 'MCP request refused (2026-07-28)'),
  });
}
