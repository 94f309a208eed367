/** Tool calls (a `tool/<name>` query or an agent's function call), with events and a span. */
import type { Context } from '@opentelemetry/api';
import type { QueryEndReason, Tool } from '../../api/index.ts';
import { found, QueryFailure } from '../failure.ts';
import { cut, errorMessage, type Scope, type TargetResult } from '../scope.ts';
import { callTool } from '../tool-client.ts';
import { inSpan } from '../tracing.ts';
import { invokeMcp, requireMcpServer } from './mcp-tool.ts';

/** The Tool an agent (or a tool target) names, or an error naming what is missing (see `found`). */
export function requireTool(scope: Scope, name: string, by: string, missing?: QueryEndReason): Tool {
  const { namespace } = scope;
  return found(scope.deps.lookup.tool(namespace, name), `${by}: Tool ${name}`, namespace, missing);
}

export async function invokeTool(
  scope: Scope,
  parent: Context,
  tool: Tool,
  input: string,
  agent?: string,
): Promise<string> {
  if (tool.spec.type === 'mcp') return invokeMcpTool(scope, parent, tool, input, agent);
  const who = { tool: tool.metadata.name, agent };
  scope.emit('ToolCallStart', `Calling tool ${tool.metadata.name}`, { ...who, input: cut(input) });
  const started = performance.now();
  return inSpan(scope.deps.tracer, parent, 'tool.call', { 'berth.tool': tool.metadata.name }, async () => {
    try {
      const result = await callTool(tool, input, {
        fetch: scope.deps.http.fetch,
        lookup: scope.deps.lookup,
        signal: scope.signal,
      });
      scope.emit('ToolCallComplete', `Tool ${tool.metadata.name} answered`, {
        ...who,
        durationMs: Math.round(performance.now() - started),
        output: cut(result),
      });
      return result;
    } catch (err) {
      if (scope.signal.aborted) throw err;
      scope.emit('ToolCallError', errorMessage(err), { ...who, error: errorMessage(err) }, true);
      throw new QueryFailure('ToolError', errorMessage(err), { cause: err });
    }
  });
}

/** A Tool of type mcp: one tool of its MCPServer, called under the Tool's name. */
function invokeMcpTool(scope: Scope, parent: Context, tool: Tool, input: string, agent?: string) {
  const name = tool.metadata.name;
  const ref = tool.spec.mcp;
  if (!ref) throw new QueryFailure('InvalidTarget', `Tool ${name}: spec.mcp is required for an mcp tool`);
  const server = requireMcpServer(scope, ref.serverRef.name, `Tool ${name}`);
  const hints = server.status?.tools?.find((t) => t.name === ref.toolName)?.annotations;
  const idempotent = !!(hints?.readOnlyHint || hints?.idempotentHint);
  return invokeMcp(scope, parent, { server, toolName: ref.toolName, name, idempotent }, input, agent);
}

/** `tool/<name>`: the input text goes to the tool as it is; its answer is the query's answer. */
export async function runToolTarget(
  scope: Scope,
  parent: Context,
  name: string,
  input: string,
): Promise<TargetResult> {
  const tool = requireTool(scope, name, `Query ${scope.name}`, 'TargetNotFound');
  const content = await invokeTool(scope, parent, tool, input);
  return { content, produced: [{ role: 'assistant', content, name }] };
}
