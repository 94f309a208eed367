/**
 * A decision on a waiting Query, checked against what the Query says (docs/approvals.md, "API"):
 * the query waits, the id is pending and undecided, its deadline has not passed, the caller is an
 * approver, the body fits the kind of request (tool call or question), edited arguments satisfy the
 * tool's input schema. Pure: the route reads the Query and writes the result.
 */
import type { ApprovalDecision, PendingApproval, Query } from '../../api/index.ts';
import type { Principal } from '../../auth/index.ts';
import { describeIssues, schemaIssues } from '../../engine/json-schema.ts';
import { httpError } from '../../http/index.ts';

export interface DecisionBody {
  id: string;
  decision: 'approve' | 'reject';
  reason?: string;
  arguments?: Record<string, unknown>;
  answer?: string;
}

/** Who decided, as recorded in `by`: the user's name, an API key's public key, or anonymous. */
export function deciderOf(p: Principal | undefined): string {
  return p?.name ?? 'anonymous';
}

/** Whether `p` may decide an approval restricted to `approvers` (names, or group:<name>). */
export function mayDecide(p: Principal | undefined, approvers: string[] | undefined): boolean {
  if (!approvers?.length) return true;
  if (!p || p.kind === 'anonymous') return false;
  const names = new Set<string>([p.name]);
  const groups = new Set<string>();
  if (p.kind === 'user') for (const g of p.groups ?? []) groups.add(g);
  if (p.actsAs) {
    names.add(p.actsAs.user);
    for (const g of p.actsAs.groups ?? []) groups.add(g);
  }
  return approvers.some((a) => (a.startsWith('group:') ? groups.has(a.slice(6)) : names.has(a)));
}

function checkArguments(p: PendingApproval, args: Record<string, unknown>): void {
  if (!p.inputSchema) return;
  let issues: ReturnType<typeof schemaIssues>;
  try {
    issues = schemaIssues(p.inputSchema, args);
  } catch (err) {
    // The tool's schema itself is unusable (e.g. a refused pattern): edits cannot be checked.
    throw httpError(
      'invalid_arguments',
      `the tool's input schema cannot check edited arguments: ${(err as Error).message}`,
    );
  }
  if (issues.length)
    throw httpError(
      'invalid_arguments',
      `arguments do not satisfy the input schema of ${p.tool}: ${describeIssues(issues)}`,
      {
        issues,
      },
    );
}

/** The decision to record, or the 4xx saying why there is none. */
export function decide(
  q: Query,
  body: DecisionBody,
  principal: Principal | undefined,
  now: Date,
): ApprovalDecision {
  const name = `${q.metadata.namespace}/${q.metadata.name}`;
  const phase = q.status?.phase ?? 'pending';
  const recorded = q.status?.approvals?.find((a) => a.id === body.id);
  if (recorded)
    throw httpError(
      'approval_already_decided',
      `approval ${body.id} of query ${name} was decided already: ${recorded.decision} by ${recorded.by} at ${recorded.at}`,
      { decision: recorded },
    );
  if (phase !== 'input-required')
    throw httpError('query_not_waiting', `query ${name} is not waiting for input (phase ${phase})`, {
      phase,
    });
  const pending = q.status?.pendingApprovals ?? [];
  const p = pending.find((x) => x.id === body.id);
  if (!p)
    throw httpError(
      'approval_not_found',
      `query ${name} has no pending approval ${JSON.stringify(body.id)}`,
      {
        pending: pending.map((x) => x.id),
      },
    );
  if (Date.parse(p.deadline) <= now.getTime())
    throw httpError(
      'approval_expired',
      `approval ${p.id} expired at ${p.deadline} (timeout ${p.timeout}); onTimeout ${p.onTimeout} applies`,
    );
  if (!mayDecide(principal, p.approvers))
    throw httpError('approval_forbidden', `${deciderOf(principal)} is not among the approvers of ${p.id}`);
  if (p.type === 'question') {
    if (body.arguments)
      throw httpError('invalid_decision', `${p.id} is a question: answer it, arguments do not apply`);
    if (body.decision === 'approve' && body.answer === undefined)
      throw httpError('invalid_decision', `${p.id} is a question: approve it with an answer`);
  } else {
    if (body.answer !== undefined)
      throw httpError('invalid_decision', `${p.id} is a tool call: answer applies to questions`);
    if (body.arguments && body.decision !== 'approve')
      throw httpError('invalid_decision', 'edited arguments go with approve');
    if (body.arguments) checkArguments(p, body.arguments);
  }
  return {
    id: p.id,
    decision: body.decision,
    by: deciderOf(principal),
    via: 'api',
    at: now.toISOString(),
    ...(body.reason ? { reason: body.reason } : {}),
    ...(body.arguments ? { arguments: body.arguments } : {}),
    ...(body.answer !== undefined && body.decision === 'approve' ? { answer: body.answer } : {}),
  };
}
