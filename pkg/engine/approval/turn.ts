/**
 * One model turn's tool calls, where some may have to wait: calls that need no decision run at once
 * (in parallel), the others become pending approvals and the turn pauses (QueryPaused); a resumed
 * turn applies the recorded decisions — approved calls run (with edited arguments when given),
 * rejected ones answer the model that a human refused them, questions answer with the human's text.
 */
import { randomBytes } from 'node:crypto';
import type { Context } from '@opentelemetry/api';
import type { ApprovalDecision, PendingApproval } from '../../api/index.ts';
import type { ChatCompletionMessageParam, ChatCompletionTool, ToolCallRequest } from '../model-client.ts';
import { cut, errorMessage, type Scope } from '../scope.ts';
import { decisionOf } from './resume.ts';
import { type AgentFrame, type CallState, QueryPaused, type ResolvedApproval } from './types.ts';

export const ASK_USER = 'ask_user';

/** A pending approval's id: short enough for an annotation key (`berth.dev/approval-<id>`). */
export const newApprovalId = () => randomBytes(5).toString('hex');

/** What the turn needs of a function the agent offers (agent-tools.ts's AgentFunction fits). */
export interface TurnFunction {
  def: ChatCompletionTool;
  invoke(scope: Scope, ctx: Context, args: string, agent: string): Promise<string>;
}

/** The built-in `ask_user`: offered like any function; its calls always wait for the human. */
export const askUserFunction: TurnFunction = {
  def: {
    type: 'function',
    function: {
      name: ASK_USER,
      description:
        'Ask the human user a question and wait for the answer. Use it when only the user can give the information or the confirmation you need.',
      parameters: {
        type: 'object',
        properties: { question: { type: 'string', description: 'The question, in full' } },
        required: ['question'],
      },
    },
  },
  invoke: () => Promise.reject(new Error('ask_user is answered by a human, not invoked')),
};

export interface Turn {
  agent: string;
  turn: number;
  repaired: boolean;
  messages: ChatCompletionMessageParam[];
  fns: Map<string, TurnFunction>;
  policies: Map<string, ResolvedApproval>;
}

/** Arguments as an object for status and events (plain text becomes `{input}`). */
export function argumentsObject(raw: string): Record<string, unknown> {
  try {
    const v = JSON.parse(raw || '{}') as unknown;
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
    return { input: v };
  } catch {
    return { input: raw };
  }
}

/** A failing tool becomes the tool's answer, so the model can recover instead of the query failing. */
async function invoke(scope: Scope, ctx: Context, t: Turn, name: string, args: string): Promise<string> {
  const fn = t.fns.get(name);
  if (!fn) return `error: tool "${name}" is not available to agent ${t.agent}`;
  try {
    return await fn.invoke(scope, ctx, args || '{}', t.agent);
  } catch (err) {
    if (scope.signal.aborted) throw err;
    return `error: ${errorMessage(err)}`;
  }
}

function pendingOf(t: Turn, call: ToolCallRequest, policy: ResolvedApproval, now: Date): PendingApproval {
  const args = argumentsObject(call.arguments);
  const question = call.name === ASK_USER;
  const def = t.fns.get(call.name)?.def;
  const schema = def?.type === 'function' ? (def.function.parameters as Record<string, unknown>) : undefined;
  return {
    id: newApprovalId(),
    type: question ? 'question' : 'tool',
    tool: call.name,
    agent: t.agent,
    arguments: args,
    ...(question ? { question: String(args.question ?? args.input ?? call.arguments) } : {}),
    ...(!question && schema ? { inputSchema: schema } : {}),
    requestedAt: now.toISOString(),
    deadline: new Date(now.getTime() + policy.timeoutMs).toISOString(),
    timeout: policy.timeout,
    onTimeout: policy.onTimeout,
    ...(policy.approvers ? { approvers: policy.approvers } : {}),
  };
}

const toolMessages = (calls: CallState[]): ChatCompletionMessageParam[] =>
  calls.map((c) => ({ role: 'tool', tool_call_id: c.id, content: c.result ?? '' }));

/**
 * Runs the turn's calls; throws QueryPaused (with the agent's frame) when some must wait. The
 * calls that needed no decision have run by then: their results are in the frame.
 */
export async function runTurn(
  scope: Scope,
  ctx: Context,
  t: Turn,
  calls: ToolCallRequest[],
  askUser: ResolvedApproval | undefined,
): Promise<ChatCompletionMessageParam[]> {
  const now = new Date();
  const pending: PendingApproval[] = [];
  const states: CallState[] = calls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments }));
  await Promise.all(
    calls.map(async (call, i) => {
      const state = states[i] as CallState;
      const policy = call.name === ASK_USER ? askUser : t.policies.get(call.name);
      if (policy && t.fns.has(call.name) && (policy.required || call.name === ASK_USER)) {
        const p = pendingOf(t, call, policy, now);
        state.approvalId = p.id;
        pending.push(p);
        return;
      }
      state.result = await invoke(scope, ctx, t, call.name, call.arguments);
    }),
  );
  if (pending.length === 0) return toolMessages(states);
  // In the order the model asked: the pushes above follow the calls' synchronous prefix.
  for (const p of pending)
    scope.emit(
      p.type === 'question' ? 'UserInputRequested' : 'ToolApprovalRequested',
      p.type === 'question'
        ? `Agent ${t.agent} asks: ${cut(p.question ?? '')}`
        : `Tool ${p.tool} waits for approval`,
      {
        approvalId: p.id,
        tool: p.tool,
        agent: t.agent,
        arguments: cut(JSON.stringify(p.arguments)),
        deadline: p.deadline,
      },
    );
  const frame: AgentFrame = {
    kind: 'agent',
    name: t.agent,
    turn: t.turn,
    repaired: t.repaired,
    messages: t.messages,
    calls: states,
  };
  throw new QueryPaused(pending, frame);
}

/** What the model is told for a decision that does not run the tool. */
function refusal(call: CallState, d: ApprovalDecision, question: boolean): string {
  const why = d.reason ? `: ${d.reason}` : '';
  if (d.via === 'timeout')
    return question
      ? `the user did not answer in time${why}`
      : `refused: nobody approved this call of ${call.name} in time${why}; it was not run`;
  return question
    ? `the user declined to answer${why}`
    : `refused: ${d.by} rejected this call of ${call.name}${why}; it was not run`;
}

/** The paused turn finished with the decisions: the tool messages to append after its tool calls. */
export async function resumeTurn(
  scope: Scope,
  ctx: Context,
  t: Turn,
  frame: AgentFrame,
): Promise<ChatCompletionMessageParam[]> {
  await Promise.all(
    frame.calls.map(async (call) => {
      if (call.result !== undefined || !call.approvalId) return;
      const d = decisionOf(scope, call.approvalId);
      const question = call.name === ASK_USER;
      scope.emit('ApprovalApplied', `${call.name}: ${d.decision} by ${d.by}`, {
        approvalId: call.approvalId,
        tool: call.name,
        agent: t.agent,
        decision: d.decision,
        by: d.by,
        via: d.via,
        reason: d.reason,
      });
      if (question)
        call.result = d.decision === 'approve' && d.answer !== undefined ? d.answer : refusal(call, d, true);
      else if (d.decision === 'approve')
        call.result = await invoke(
          scope,
          ctx,
          t,
          call.name,
          d.arguments ? JSON.stringify(d.arguments) : call.arguments,
        );
      else call.result = refusal(call, d, false);
    }),
  );
  return toolMessages(frame.calls);
}
