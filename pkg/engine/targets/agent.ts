/**
 * `agent/<name>`: the agent's prompt as system message, then the conversation, then a loop of model
 * turns; each turn that asks for tools runs them (in parallel) and feeds the results back, until the
 * model answers without tool calls or the agent's `maxTurns` (default 10) model turns are used up.
 * Its tools are Tools and tools of MCPServers (agent-tools.ts); a failing one answers the model with
 * `error: …` (a server gone mid-query included) and the query goes on.
 */
import type { Context } from '@opentelemetry/api';
import type { QueryEndReason } from '../../api/index.ts';
import { found } from '../failure.ts';
import type { ChatCompletionMessageParam, ToolCallRequest } from '../model-client.ts';
import { errorMessage, type Scope, type TargetResult } from '../scope.ts';
import { inSpan } from '../tracing.ts';
import { type AgentFunction, agentFunctions } from './agent-tools.ts';
import { callModel, requireModel } from './llm.ts';

export const DEFAULT_AGENT_MAX_TURNS = 10;

/** A failing tool becomes the tool's answer, so the model can recover (retry, explain) instead of the query failing. */
async function runToolCall(
  scope: Scope,
  ctx: Context,
  call: ToolCallRequest,
  byName: Map<string, AgentFunction>,
  agent: string,
): Promise<ChatCompletionMessageParam> {
  const tool = byName.get(call.name);
  let content: string;
  if (!tool) {
    content = `error: tool "${call.name}" is not available to agent ${agent}`;
  } else {
    try {
      content = await tool.invoke(scope, ctx, call.arguments || '{}', agent);
    } catch (err) {
      if (scope.signal.aborted) throw err;
      content = `error: ${errorMessage(err)}`;
    }
  }
  return { role: 'tool', tool_call_id: call.id, content };
}

export async function runAgent(
  scope: Scope,
  parent: Context,
  name: string,
  conversation: ChatCompletionMessageParam[],
  /** TargetNotFound when the agent is the query's target, InvalidTarget when a team names it. */
  missing: QueryEndReason = 'InvalidTarget',
): Promise<TargetResult> {
  const owner = `Agent ${name}`;
  const agent = found(scope.deps.lookup.agent(scope.namespace, name), owner, scope.namespace, missing);
  const model = requireModel(scope, agent.spec.modelRef?.name ?? 'default', owner);
  const byName = await agentFunctions(scope, agent.spec.tools ?? [], owner);
  const defs = [...byName.values()].map((f) => f.def);
  const maxTurns = agent.spec.maxTurns ?? DEFAULT_AGENT_MAX_TURNS;
  scope.emit('AgentExecutionStart', `Agent ${name} started`, { agent: name, model: model.metadata.name });
  const started = performance.now();
  return inSpan(scope.deps.tracer, parent, 'agent.execution', { 'berth.agent': name }, async (ctx) => {
    const messages: ChatCompletionMessageParam[] = [
      { role: 'system', content: agent.spec.prompt },
      ...conversation,
    ];
    for (let turn = 1; turn <= maxTurns; turn++) {
      const answer = await callModel(scope, ctx, model, messages, { tools: defs, agent: name });
      if (answer.toolCalls.length === 0) {
        scope.emit('AgentExecutionComplete', `Agent ${name} answered`, {
          agent: name,
          turns: turn,
          durationMs: Math.round(performance.now() - started),
        });
        return { content: answer.content, produced: [{ role: 'assistant', content: answer.content, name }] };
      }
      messages.push({
        role: 'assistant',
        content: answer.content || null,
        tool_calls: answer.toolCalls.map((c) => ({
          id: c.id,
          type: 'function',
          function: { name: c.name, arguments: c.arguments },
        })),
      });
      messages.push(
        ...(await Promise.all(answer.toolCalls.map((c) => runToolCall(scope, ctx, c, byName, name)))),
      );
    }
    const message = `${owner}: no final answer within maxTurns (${maxTurns}) model turns; the model kept calling tools`;
    scope.emit('AgentExecutionError', message, { agent: name, error: message }, true);
    throw new Error(message);
  });
}
