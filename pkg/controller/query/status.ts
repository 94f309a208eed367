import {
  endReasonOf,
  QUERY_RUNNING_REASON,
  type Query,
  type QueryEndReason,
  type QueryStatus,
} from '../../api/index.ts';
import type { PausedOutcome } from '../../engine/approval/pause.ts';
import type { QueryOutcome } from '../../engine/contract.ts';
import { completedCondition, formatDuration } from '../runs/status.ts';

/** Status for the pending → running transition. */
export function runningStatus(q: Query, now: Date): QueryStatus {
  const ts = now.toISOString();
  return {
    phase: 'running',
    startTime: ts,
    conditions: [
      completedCondition('False', QUERY_RUNNING_REASON, 'the query is running', ts, q.metadata.generation),
    ],
    observedGeneration: q.metadata.generation,
  };
}

/**
 * Status of a finished query. Written as a merge patch, so fields a previous phase may have left
 * (message, response) are nulled explicitly when the new phase has none.
 */
export function finishedStatus(
  q: Query,
  outcome: Exclude<QueryOutcome, PausedOutcome>,
  now: Date,
  startedAt?: number,
): Record<string, unknown> {
  const ts = now.toISOString();
  // A quick run never wrote `running`: its start comes from the run itself.
  const started = q.status?.startTime ? Date.parse(q.status.startTime) : (startedAt ?? now.getTime());
  const conversationId = outcome.conversationId ?? q.status?.conversationId;
  const message =
    outcome.phase === 'done' ? 'the query completed' : outcome.message || `the query ended: ${outcome.phase}`;
  return {
    phase: outcome.phase,
    message: outcome.phase === 'done' ? null : message,
    response: outcome.phase === 'done' ? { target: q.spec.target, content: outcome.content } : null,
    tokenUsage: outcome.phase === 'canceled' ? null : (outcome.tokenUsage ?? null),
    conversationId: conversationId ?? null,
    a2a: conversationId ? { contextId: conversationId } : null,
    startTime: q.status?.startTime ?? new Date(started).toISOString(),
    completionTime: ts,
    duration: formatDuration(now.getTime() - started),
    // The engine's reason (pkg/api QUERY_END_REASONS), else the phase's; the phase wins a mismatch.
    conditions: [
      completedCondition(
        'True',
        endReasonOf(outcome.phase, outcome.reason),
        message,
        ts,
        q.metadata.generation,
      ),
      ...inputResolved(q, ts),
    ],
    // What a pause left: nothing waits any more (status.approvals stays, the record of decisions).
    pendingApprovals: null,
    checkpoint: null,
    observedGeneration: q.metadata.generation,
  };
}

/** `InputRequired=False` for a query that once waited (the condition stays, its status flipped). */
function inputResolved(q: Query, ts: string) {
  const had = q.status?.conditions?.some((c) => c.type === 'InputRequired');
  if (!had) return [];
  return [
    {
      type: 'InputRequired',
      status: 'False' as const,
      reason: 'Resolved',
      message: 'nothing waits for a decision',
      lastTransitionTime: ts,
      observedGeneration: q.metadata.generation,
    },
  ];
}

/**
 * Status of a run that paused for decisions (docs/approvals.md): phase input-required, what waits,
 * the checkpoint to resume from, `InputRequired=True`. Written once per pause; the run is over.
 */
export function waitingStatus(q: Query, outcome: PausedOutcome, now: Date, startedAt?: number) {
  const ts = now.toISOString();
  const questions = outcome.pending.filter((p) => p.type === 'question').length;
  const tools = outcome.pending.length - questions;
  const what = [
    tools ? `${tools} tool call(s) to approve` : '',
    questions ? `${questions} question(s) to answer` : '',
  ]
    .filter(Boolean)
    .join(' and ');
  const message = `waiting for ${what}`;
  const conversationId = outcome.conversationId ?? q.status?.conversationId;
  return {
    phase: 'input-required',
    message,
    pendingApprovals: outcome.pending,
    checkpoint: outcome.checkpoint,
    tokenUsage: outcome.tokenUsage,
    conversationId: conversationId ?? null,
    a2a: conversationId ? { contextId: conversationId } : null,
    startTime: q.status?.startTime ?? new Date(startedAt ?? now.getTime()).toISOString(),
    conditions: [
      completedCondition('False', 'InputRequired', message, ts, q.metadata.generation),
      {
        type: 'InputRequired',
        status: 'True',
        reason: questions && !tools ? 'QuestionAsked' : 'ApprovalRequired',
        message,
        lastTransitionTime: ts,
        observedGeneration: q.metadata.generation,
      },
    ],
    observedGeneration: q.metadata.generation,
  };
}

/**
 * Status of a query that ends without a run: canceled before it started (reason Canceled), or
 * orphaned by a restart — the only run-less error, hence reason Orphaned unless told otherwise.
 */
export function endedWithoutRun(
  q: Query,
  phase: 'error' | 'canceled',
  message: string,
  now: Date,
  reason: QueryEndReason = phase === 'canceled' ? 'Canceled' : 'Orphaned',
) {
  const outcome = { phase, reason, message } as Exclude<QueryOutcome, PausedOutcome>;
  return finishedStatus(q, outcome, now);
}
