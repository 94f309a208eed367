/**
 * `agent/<name>`: the agent's prompt as system message, then the conversation, then a loop of model
 * turns; each turn that asks for tools runs them (in parallel) and feeds the results back, until the
 * model answers without tool calls or the agent's `maxTurns` (default 10) model turns are used up.
 * Its tools are Tools and tools of MCPServers (agent-tools.ts); a failing one answers the model with
 * `error: …` (a server gone mid-query included) and the query goes on. Calls whose approval policy
 * requires it, and `ask_user`, pause the query instead (approval/turn.ts); a resumed run continues
 * from the paused turn. With an output contract (structured.ts) the final answer is validated, with
 * one repair round.
 */
import type { Context } from '@opentelemetry/api';
import type { QueryEndReason } from '../../api/index.ts';
import { agentPolicies, resolvePolicy } from '../approval/policy.ts';
import { takeFrame } from '../approval/resume.ts';
import {
  ASK_USER,
  askUserFunction,
  resumeTurn,
  runTurn,
  type Turn,
  type TurnFunction,
} from '../approval/turn.ts';
import type { AgentFrame, ResolvedApproval } from '../approval/types.ts';
import { found } from '../failure.ts';
import type { ChatCompletionMessageParam } from '../model-client.ts';
import type { Scope, TargetResult } from '../scope.ts';
import { agentContract, checkAnswer, instruction, invalidOutput, repairRequest } from '../structured.ts';
import { inSpan } from '../tracing.ts';
import { agentFunctions } from './agent-tools.ts';
import { callModel, requireModel } from './llm.ts';

export const DEFAULT_AGENT_MAX_TURNS = 10;

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
  const refs = agent.spec.tools ?? [];
  const fns = new Map<string, TurnFunction>(
    await agentFunctions(
      scope,
      refs.filter((r) => !r.builtin),
      owner,
    ),
  );
  const policies = await agentPolicies(scope, refs, owner);
  const askRef = refs.find((r) => r.builtin === ASK_USER);
  let askUser: ResolvedApproval | undefined;
  if (askRef) {
    fns.set(ASK_USER, askUserFunction);
    askUser = resolvePolicy(askRef.approval, undefined, undefined, owner);
  }
  const defs = [...fns.values()].map((f) => f.def);
  const contract = agentContract(agent, scope.query, missing === 'TargetNotFound');
  const maxTurns = agent.spec.maxTurns ?? DEFAULT_AGENT_MAX_TURNS;
  const frame = takeFrame(scope, 'agent', name);
  scope.emit(
    frame ? 'AgentExecutionResume' : 'AgentExecutionStart',
    `Agent ${name} ${frame ? 'resumed' : 'started'}`,
    {
      agent: name,
      model: model.metadata.name,
    },
  );
  const started = performance.now();
  return inSpan(scope.deps.tracer, parent, 'agent.execution', { 'berth.agent': name }, async (ctx) => {
    const prompt = contract ? `${agent.spec.prompt}\n\n${instruction(contract)}` : agent.spec.prompt;
    const t: Turn = {
      agent: name,
      turn: 1,
      repaired: false,
      messages: [{ role: 'system', content: prompt }, ...conversation],
      fns,
      policies,
    };
    if (frame) await resumeFrom(scope, ctx, t, frame);
    for (; t.turn <= maxTurns; t.turn++) {
      const answer = await callModel(scope, ctx, model, t.messages, {
        tools: defs,
        agent: name,
        responseFormat: contract?.responseFormat,
      });
      if (answer.toolCalls.length === 0) {
        let content = answer.content;
        if (contract) {
          const checked = checkAnswer(contract, content);
          if ('violation' in checked) {
            if (t.repaired) throw invalidOutput(contract, owner, checked.violation);
            scope.emit('OutputRepairRequested', `Agent ${name}: ${checked.violation}`, { agent: name }, true);
            t.repaired = true;
            t.messages.push({ role: 'assistant', content }, repairRequest(checked.violation));
            continue;
          }
          content = checked.ok;
        }
        scope.emit('AgentExecutionComplete', `Agent ${name} answered`, {
          agent: name,
          turns: t.turn,
          durationMs: Math.round(performance.now() - started),
        });
        return { content, produced: [{ role: 'assistant', content, name }] };
      }
      t.messages.push({
        role: 'assistant',
        content: answer.content || null,
        tool_calls: answer.toolCalls.map((c) => ({
          id: c.id,
          type: 'function',
          function: { name: c.name, arguments: c.arguments },
        })),
      });
      t.messages.push(...(await runTurn(scope, ctx, t, answer.toolCalls, askUser)));
    }
    const message = `${owner}: no final answer within maxTurns (${maxTurns}) model turns; the model kept calling tools`;
    scope.emit('AgentExecutionError', message, { agent: name, error: message }, true);
    throw new Error(message);
  });
}

/** A resumed agent: its conversation and turn from the frame, the paused turn's calls finished. */
async function resumeFrom(scope: Scope, ctx: Context, t: Turn, frame: AgentFrame): Promise<void> {
  t.messages = frame.messages;
  t.turn = frame.turn;
  t.repaired = frame.repaired;
  t.messages.push(...(await resumeTurn(scope, ctx, t, frame)));
  t.turn++;
}
