import { z } from '@hono/zod-openapi';
import type { AnyOpenAPIHono } from '../../http/index.ts';

/**
 * OpenAPI entries of `/mcp` (its handler is a plain Hono route), so /openapi.json names it too.
 * The protocol itself is MCP's, not described here: docs/mcp.md, "Berth as an MCP server".
 */
export function documentMcpRoute(app: AnyOpenAPIHono) {
  const message = z
    .object({
      jsonrpc: z.literal('2.0'),
      id: z.union([z.string(), z.number()]).optional(),
      method: z.string().openapi({ example: 'tools/call' }),
      params: z.record(z.string(), z.unknown()).optional(),
    })
    .openapi({ description: 'One JSON-RPC message (no batches)' });
  const answer = z
    .object({
      jsonrpc: z.literal('2.0'),
      id: z.union([z.string(), z.number()]).nullable().optional(),
      result: z.record(z.string(), z.unknown()).optional(),
      error: z.object({ code: z.number(), message: z.string(), data: z.unknown().optional() }).optional(),
    })
    .openapi({ description: 'The JSON-RPC answer' });
  const envelope = z.object({
    error: z.object({ code: z.string(), message: z.string(), requestId: z.string().optional() }),
  });
  const refusals = Object.fromEntries(
    [400, 401, 403, 404, 405, 413, 415, 429].map((s) => [
      s,
      {
        description: 'Refused: the error envelope (before the SDKs) or a JSON-RPC error (theirs)',
        content: { 'application/json': { schema: z.union([envelope, answer]) } },
      },
    ]),
  );
  const sessionHeader = z.object({
    'mcp-session-id': z
      .string()
      .optional()
      .openapi({ description: '2025-11-25: the session initialize answered' }),
  });
  const tags = ['MCP'];
  app.openAPIRegistry.registerPath({
    method: 'post',
    path: '/mcp',
    tags,
    summary:
      'Berth as an MCP server: both revisions (2026-07-28, 2025-11-25); tools list_targets, invoke_target',
    request: {
      headers: sessionHeader,
      body: { required: true, content: { 'application/json': { schema: message } } },
    },
    responses: {
      200: {
        description: 'The answer; a tool call with progress is answered as SSE',
        content: { 'application/json': { schema: answer }, 'text/event-stream': { schema: z.string() } },
      },
      202: {
        description: 'A notification, accepted',
        content: { 'application/json': { schema: z.object({}) } },
      },
      ...refusals,
    },
  });
  app.openAPIRegistry.registerPath({
    method: 'delete',
    path: '/mcp',
    tags,
    summary: 'Ends a 2025-11-25 session',
    request: { headers: sessionHeader },
    responses: {
      200: { description: 'The session is closed', content: { 'text/plain': { schema: z.string() } } },
      ...refusals,
    },
  });
}
