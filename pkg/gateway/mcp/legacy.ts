/**
 * Revision 2025-11-25 of `/mcp` through `@modelcontextprotocol/sdk` 1.x: streamable HTTP with an
 * `initialize` handshake and `Mcp-Session-Id` sessions (sessions.ts keeps them). Its McpServer
 * registers the same tools as the modern one (tools.ts).
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { isJSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
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

/** The requests a session answers; `ping` and `initialize` are the SDK's own. */
const METHODS: ReadonlySet<string> = new Set(['initialize', 'ping', 'tools/list', 'tools/call']);

export function legacyServer(deps: GatewayDeps, waitTimeoutMs: number): McpServer {
  const server = new McpServer(serverInfo(deps), { instructions: INSTRUCTIONS });
  server.registerTool(listTargetsTool.name, listTargetsTool.config, () => runListTargets(deps));
  server.registerTool(invokeTargetTool.name, invokeTargetTool.config, (args, extra) =>
    runInvokeTarget(deps, args, {
      signal: extra.signal,
      waitTimeoutMs,
      progress: progressVia(extra._meta?.progressToken, (n) => extra.sendNotification(n)),
    }),
  );
  return server;
}

/**
 * A request for a method no session answers gets what the 2026-07-28 handler answers for one:
 * HTTP 404 with the JSON-RPC error -32601 (the 1.x SDK would answer 200 with it, on a stream).
 */
export function unknownMethod(body: unknown): Response | undefined {
  if (!isJSONRPCRequest(body) || METHODS.has(body.method)) return undefined;
  return Response.json(
    { jsonrpc: '2.0', id: body.id, error: { code: -32601, message: 'Method not found' } },
    { status: 404 },
  );
}
