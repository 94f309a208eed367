/**
 * A Query in `input-required` (docs/approvals.md): level-based, from what the Query says. Decisions
 * given as annotations (kubectl) and the deadlines' onTimeout are recorded in `status.approvals`;
 * once every pending approval has a decision the Query is claimed — phase `running`, written on the
 * resourceVersion just read, so of two controllers (or a stale cache) only one claim succeeds — and
 * the claimed Query is handed to the engine to resume. A cancel resumes too: the engine ends it.
 */
import {
  APPROVAL_ANNOTATION_PREFIX,
  APPROVAL_LIMITS,
  type ApprovalDecision,
  Kinds,
  type PendingApproval,
  QUERY_RUNNING_REASON,
  type Query,
} from '../../api/index.ts';
import { type Client, patchStatus } from '../../kube/client/index.ts';
import type { EventRecorder } from '../../kube/events.ts';
import type { Logger } from '../../log/index.ts';
import { completedCondition } from '../runs/status.ts';

/** Longest a waiting Query sleeps before it is looked at again (deadlines far away, clock drift). */
const MAX_SLEEP_MS = 60 * 60_000;

export type WaitingStep =
  | { kind: 'wait'; requeueAfterMs?: number }
  | { kind: 'recorded' }
  | { kind: 'resume'; query: Query };

export interface WaitingDeps {
  client: Client;
  recorder: EventRecorder;
  log: Logger;
  signal: AbortSignal;
}

/** A decision an annotation states, or why its value is not one. */
export function annotationDecision(
  pending: PendingApproval,
  value: string,
  now: Date,
): ApprovalDecision | { problem: string } {
  const colon = value.indexOf(':');
  const word = (colon < 0 ? value : value.slice(0, colon)).trim().toLowerCase();
  const text = colon < 0 ? undefined : value.slice(colon + 1).trim() || undefined;
  const base = { id: pending.id, by: 'annotation', via: 'annotation' as const, at: now.toISOString() };
  if (word === 'reject')
    return {
      ...base,
      decision: 'reject',
      ...(text ? { reason: text.slice(0, APPROVAL_LIMITS.reasonChars) } : {}),
    };
  if (word !== 'approve') return { problem: `"${value.slice(0, 40)}" is not approve[:…] or reject[:…]` };
  if (pending.type === 'question') {
    if (!text) return { problem: 'a question is answered with approve:<answer>' };
    return { ...base, decision: 'approve', answer: text.slice(0, APPROVAL_LIMITS.answerChars) };
  }
  return {
    ...base,
    decision: 'approve',
    ...(text ? { reason: text.slice(0, APPROVAL_LIMITS.reasonChars) } : {}),
  };
}

function timeoutDecision(p: PendingApproval, now: Date): ApprovalDecision {
  return {
    id: p.id,
    decision: p.onTimeout === 'proceed' ? 'approve' : 'reject',
    by: 'system:approval-timeout',
    via: 'timeout',
    at: now.toISOString(),
    reason: `no decision within ${p.timeout} (onTimeout: ${p.onTimeout})`,
  };
}

/** What to do with a waiting Query now. */
export async function tendWaiting(q: Query, d: WaitingDeps, now = new Date()): Promise<WaitingStep> {
  const pending = q.status?.pendingApprovals ?? [];
  const recorded = q.status?.approvals ?? [];
  const decided = new Set(recorded.map((a) => a.id));
  if (!q.spec.cancel) {
    const fresh: ApprovalDecision[] = [];
    const annotations = q.metadata.annotations ?? {};
    for (const p of pending) {
      if (decided.has(p.id)) continue;
      const value = annotations[`${APPROVAL_ANNOTATION_PREFIX}${p.id}`];
      if (value !== undefined && p.approvers?.length) {
        // Kubernetes does not tell who set an annotation: a restricted approval is decided through the API only.
        await warn(
          d,
          q,
          'ApprovalAnnotationIgnored',
          `approval ${p.id} names approvers: decide it through the API`,
        );
      } else if (value !== undefined) {
        const got = annotationDecision(p, value, now);
        if (!('problem' in got)) {
          fresh.push(got);
          continue;
        }
        await warn(d, q, 'ApprovalAnnotationInvalid', `approval ${p.id}: ${got.problem}`);
      }
      if (Date.parse(p.deadline) <= now.getTime()) fresh.push(timeoutDecision(p, now));
    }
    if (fresh.length) {
      await patchStatus(
        d.client,
        Kinds.Query,
        q,
        { approvals: [...recorded, ...fresh] },
        {
          resourceVersion: q.metadata.resourceVersion,
          signal: d.signal,
        },
      );
      for (const a of fresh)
        await d.recorder.record(q, {
          type: 'Normal',
          reason: a.via === 'timeout' ? 'ApprovalTimedOut' : 'ApprovalDecided',
          message: `${a.id}: ${a.decision} by ${a.by}${a.reason ? `: ${a.reason}` : ''}`,
        });
      return { kind: 'recorded' };
    }
    const open = pending.filter((p) => !decided.has(p.id));
    if (open.length) {
      const next = Math.min(...open.map((p) => Date.parse(p.deadline)));
      const ms = Number.isFinite(next) ? next - now.getTime() : MAX_SLEEP_MS;
      return { kind: 'wait', requeueAfterMs: Math.min(Math.max(ms, 0) + 50, MAX_SLEEP_MS) };
    }
  }
  const claimed = await claim(q, d, now);
  await d.recorder.record(claimed, {
    type: 'Normal',
    reason: q.spec.cancel ? 'CanceledWhileWaiting' : 'Resumed',
    message: q.spec.cancel
      ? 'canceled while waiting for input'
      : 'every pending approval has a decision: resuming',
  });
  return { kind: 'resume', query: claimed };
}

/** input-required → running on the version read: a Conflict means someone else moved it first. */
function claim(q: Query, d: WaitingDeps, now: Date): Promise<Query> {
  const ts = now.toISOString();
  const message = q.spec.cancel ? 'canceled while waiting for input' : 'resumed after the decisions';
  return patchStatus<Query>(
    d.client,
    Kinds.Query,
    q,
    {
      phase: 'running',
      message: null,
      conditions: [
        completedCondition('False', QUERY_RUNNING_REASON, 'the query is running', ts, q.metadata.generation),
        {
          type: 'InputRequired',
          status: 'False',
          reason: 'Decided',
          message,
          lastTransitionTime: ts,
          observedGeneration: q.metadata.generation,
        },
      ],
    },
    { resourceVersion: q.metadata.resourceVersion, signal: d.signal },
  );
}

function warn(d: WaitingDeps, q: Query, reason: string, message: string): Promise<void> {
  d.log.warn({ reason }, message);
  return d.recorder.record(q, { type: 'Warning', reason, message });
}
