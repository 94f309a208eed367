/** Tool calls (a `tool/<name>` query or an agent's function call), with events and a span. */
import type { Context } from '@opentelemetry/api';
import type { QueryEndReason, Tool } from '../../api/index.ts';
import { QueryFailure } from '../failure.ts';
import { cut, errorMessage, type Scope, type TargetResult } from '../scope.ts';
import { callTool } from '../tool-client.ts';
import { inSpan } from '../tracing.ts';

/** The Tool named; missing: TargetNotFound for the query's own target, else InvalidTarget. */
export function requireTool(
  scope: Scope,
  name: string,
  by: string,
  missing: QueryEndReason = 'InvalidTarget',
): Tool {
  const tool = scope.deps.lookup.tool(scope.namespace, name);
  if (!tool) throw new QueryFailure(missing, `${by}: Tool ${name} not found in namespace ${scope.namespace}`);
  return tool;
}

export async function invokeTool(
  scope: Scope,
  parent: Context,
  tool: Tool,
  input: string,
  agent?: string,
): Promise<string> {
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
