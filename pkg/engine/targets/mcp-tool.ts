/**
 * MCP tools in a query: the endpoint of an MCPServer (its resolved address, its headers with
 * Secret values, its timeout and retries), the tools it offers (its status, else a live listing),
 * and one traced, evented tool call with the query's trace context in `_meta.traceparent`.
 */
import type { Context } from '@opentelemetry/api';
import { MCP_DEFAULTS, type MCPServer, type McpToolInfo } from '../../api/index.ts';
import { durationField } from '../duration.ts';
import { failedWith, QueryFailure } from '../failure.ts';
import { resolveHeaders } from '../headers.ts';
import { type McpEndpoint, McpFailure } from '../mcp/index.ts';
import { cut, errorMessage, type Scope } from '../scope.ts';
import { currentTraceparent, inSpan } from '../tracing.ts';

/** The MCPServer a Tool or an agent names, or an InvalidTarget failure naming what is missing. */
export function requireMcpServer(scope: Scope, name: string, by: string): MCPServer {
  const server = scope.deps.lookup.mcpServer?.(scope.namespace, name);
  if (!server)
    throw new QueryFailure(
      'InvalidTarget',
      `${by}: MCPServer ${name} not found in namespace ${scope.namespace}`,
    );
  return server;
}

const labelOf = (s: MCPServer) => `MCPServer ${s.metadata.namespace ?? 'default'}/${s.metadata.name}`;

/** Where and how to call a server: its resolved address (or a direct one), headers, timeout, retries. */
export function mcpEndpoint(scope: Scope, server: MCPServer): McpEndpoint {
  const label = labelOf(server);
  const url = server.status?.lastResolvedAddress ?? server.spec.address?.value;
  if (!url) {
    const why = server.status?.message ? `: ${server.status.message}` : '';
    throw new QueryFailure(
      'InvalidTarget',
      `${label} has no resolved address yet (status.lastResolvedAddress is empty${why})`,
    );
  }
  try {
    const timeoutText = server.spec.timeout ?? MCP_DEFAULTS.timeout;
    return {
      label,
      url,
      headers: resolveHeaders(server.spec.headers, scope.namespace, scope.deps.lookup, label),
      timeoutMs: durationField(server.spec.timeout, MCP_DEFAULTS.timeout, `${label}: spec.timeout`),
      timeoutText,
      maxRetries: server.spec.maxRetries ?? MCP_DEFAULTS.maxRetries,
    };
  } catch (err) {
    throw failedWith('InvalidTarget', err); // a header Secret that is missing or not opted in
  }
}

/**
 * The server's tools: its status when the controller listed them, else listed now (a Query may run
 * before the first discovery has finished: objects applied together reach the cache in any order).
 */
export async function serverTools(scope: Scope, server: MCPServer): Promise<McpToolInfo[]> {
  const known = server.status?.tools;
  if (known && (known.length > 0 || server.status?.phase === 'ready')) return known;
  try {
    const found = await scope.deps.mcp.tools(mcpEndpoint(scope, server), scope.signal);
    return found.tools as McpToolInfo[];
  } catch (err) {
    if (scope.signal.aborted) throw err;
    throw failedWith(
      'InvalidTarget',
      new Error(`cannot list the tools: ${errorMessage(err)}`, { cause: err }),
    );
  }
}

/** Arguments as the model wrote them (a JSON object); plain text becomes `{"input": text}`. */
function argsOf(input: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(input || '{}');
  } catch {
    return { input };
  }
  if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
    return parsed as Record<string, unknown>;
  return { input: parsed };
}

export interface McpCall {
  server: MCPServer;
  /** The tool's name on the server. */
  toolName: string;
  /** What the query and its events call it: the Tool's name, or the function name the agent offers. */
  name: string;
  /** The server says calling it twice is harmless (readOnlyHint or idempotentHint): transient failures are retried. */
  idempotent?: boolean;
}

/** One MCP tool call as a `tool.call` span with ToolCall* events; a failure is a ToolError. */
export async function invokeMcp(scope: Scope, parent: Context, call: McpCall, input: string, agent?: string) {
  const { server, toolName } = call;
  const who = { tool: call.name, agent, mcpServer: server.metadata.name, mcpTool: toolName };
  const attrs = {
    'berth.tool': call.name,
    'berth.mcp.server': server.metadata.name,
    'gen_ai.tool.name': toolName,
    'mcp.method.name': 'tools/call',
  };
  scope.emit('ToolCallStart', `Calling MCP tool ${toolName} of ${labelOf(server)}`, {
    ...who,
    input: cut(input),
  });
  const started = performance.now();
  return inSpan(scope.deps.tracer, parent, 'tool.call', attrs, async (_ctx, span) => {
    try {
      const ep = mcpEndpoint(scope, server);
      const traceparent = currentTraceparent();
      const out = await scope.deps.mcp.callTool(ep, toolName, argsOf(input), {
        signal: scope.signal,
        meta: traceparent ? { traceparent } : {},
        idempotent: call.idempotent,
      });
      span.setAttribute('mcp.protocol.version', out.protocolVersion);
      if (out.isError)
        throw new McpFailure('ToolError', `${ep.label}: tool ${toolName} reported an error: ${out.text}`);
      scope.emit('ToolCallComplete', `MCP tool ${toolName} answered`, {
        ...who,
        protocolVersion: out.protocolVersion,
        durationMs: Math.round(performance.now() - started),
        output: cut(out.text),
      });
      return out.text;
    } catch (err) {
      if (scope.signal.aborted) throw err;
      scope.emit('ToolCallError', errorMessage(err), { ...who, error: errorMessage(err) }, true);
      throw failedWith('ToolError', err);
    }
  });
}
