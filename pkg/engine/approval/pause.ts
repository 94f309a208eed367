/**
 * The run's side of a pause: the `input-required` outcome with its checkpoint, the chunk streaming
 * clients see while the query waits (and the one when it goes on), and the gate of a `tool/<name>`
 * query whose Tool needs approval.
 */
import type { PendingApproval, TokenUsage, Tool } from '../../api/index.ts';
import { QueryFailure } from '../failure.ts';
import type { Scope } from '../scope.ts';
import { storable } from './checkpoint.ts';
import { toolPolicy } from './policy.ts';
import { decisionOf, takeFrame } from './resume.ts';
import { argumentsObject, newApprovalId } from './turn.ts';
import { CHECKPOINT_VERSION, type Checkpoint, QueryPaused } from './types.ts';

/** A run that stopped to wait for decisions; the controller writes it as phase `input-required`. */
export interface PausedOutcome {
  phase: 'input-required';
  reason?: undefined;
  pending: PendingApproval[];
  checkpoint: Record<string, unknown>;
  conversationId?: string;
  tokenUsage: TokenUsage;
}

/** The `berth` extension of a chunk: what /compat/v1 streaming clients see (docs/approvals.md). */
function berthChunk(scope: Scope, berth: Record<string, unknown>) {
  const target = scope.query.spec?.target;
  return {
    id: `${scope.name}-${berth.type}`,
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model: `${target?.type}/${target?.name}`,
    choices: [{ index: 0, delta: {}, finish_reason: null }],
    berth,
  };
}

/** The outcome of a run that paused: checkpoint built and capped, waiting chunk written, stream left open. */
export async function pausedOutcome(
  scope: Scope,
  paused: QueryPaused,
  o: { runMs: number; conversationId: string | undefined },
): Promise<PausedOutcome> {
  const checkpoint: Checkpoint = {
    v: CHECKPOINT_VERSION,
    runMs: Math.round(o.runMs),
    usage: { ...scope.usage },
    ...(o.conversationId ? { conversationId: o.conversationId } : {}),
    frames: paused.frames,
  };
  const stored = storable(checkpoint, paused.pending, scope.secrets);
  scope.stream?.write(
    berthChunk(scope, {
      type: 'input_required',
      query: scope.name,
      namespace: scope.namespace,
      pendingApprovals: stored.pending.map(
        ({ id, type, tool, agent, arguments: args, question, deadline }) => ({
          id,
          type,
          tool,
          agent,
          arguments: args,
          question,
          deadline,
        }),
      ),
      decide: `POST /v1/namespaces/${scope.namespace}/queries/${scope.name}/approvals`,
    }),
  );
  await scope.stream?.detach();
  scope.emit('QueryInputRequired', `Query ${scope.name} waits for ${stored.pending.length} decision(s)`, {
    approvals: stored.pending.map((p) => p.id).join(','),
    tools: stored.pending.map((p) => p.tool).join(','),
  });
  scope.log.info({ pending: stored.pending.map((p) => `${p.id}:${p.tool}`) }, 'query waits for input');
  return {
    phase: 'input-required',
    pending: stored.pending,
    checkpoint: stored.checkpoint,
    conversationId: o.conversationId,
    tokenUsage: { ...scope.usage },
  };
}

/** Streaming clients learn the query goes on, and with which decisions. */
export function resumedChunk(scope: Scope): void {
  const decisions = (scope.query.status?.approvals ?? []).map(({ id, decision, by, via }) => ({
    id,
    decision,
    by,
    via,
  }));
  scope.stream?.write(berthChunk(scope, { type: 'resumed', query: scope.name, decisions }));
}

/**
 * A `tool/<name>` query: the input to call the Tool with, once it may run. A Tool that needs
 * approval pauses the query first; a rejection (or a timeout with onTimeout reject) ends it Rejected.
 */
export function gateToolTarget(scope: Scope, tool: Tool, input: string): string {
  const name = tool.metadata.name;
  const frame = takeFrame(scope, 'tool', name);
  if (frame) {
    const d = decisionOf(scope, frame.approvalId);
    if (d.decision !== 'approve') {
      const why = d.via === 'timeout' ? 'nobody approved it in time' : `${d.by} rejected it`;
      throw new QueryFailure(
        'Rejected',
        `Tool ${name}: the call was not run: ${why}${d.reason ? `: ${d.reason}` : ''}`,
      );
    }
    return d.arguments ? JSON.stringify(d.arguments) : frame.input;
  }
  const policy = toolPolicy(scope, tool);
  if (!policy.required) return input;
  const now = new Date();
  const pending: PendingApproval = {
    id: newApprovalId(),
    type: 'tool',
    tool: name,
    arguments: argumentsObject(input),
    ...(tool.spec.inputSchema ? { inputSchema: tool.spec.inputSchema } : {}),
    requestedAt: now.toISOString(),
    deadline: new Date(now.getTime() + policy.timeoutMs).toISOString(),
    timeout: policy.timeout,
    onTimeout: policy.onTimeout,
    ...(policy.approvers ? { approvers: policy.approvers } : {}),
  };
  scope.emit('ToolApprovalRequested', `Tool ${name} waits for approval`, {
    approvalId: pending.id,
    tool: name,
  });
  throw new QueryPaused([pending], { kind: 'tool', name, input, approvalId: pending.id });
}
