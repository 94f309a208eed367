/**
 * Why a Query ended: the `reason` of its `Completed=True` condition. The engine sets it where the
 * failure is known; the controller writes it; the API service maps it to HTTP and OpenAI errors
 * (pkg/gateway/compat/end-answers.ts) and the dashboard can show it. Machine-readable: match on the
 * reason, never on the condition's message. `Completed=False` carries `Running` (QUERY_RUNNING_REASON).
 */
import type { QueryPhase } from './query.ts';

interface EndReasonDef {
  /** The phase a Query ending for this reason has. */
  phase: Extract<QueryPhase, 'done' | 'error' | 'canceled'>;
  description: string;
}

export const QUERY_END_REASONS = {
  Succeeded: { phase: 'done', description: 'The target answered; status.response holds the answer.' },
  Timeout: {
    phase: 'error',
    description:
      'spec.timeout passed before the run ended (the run was aborted), or while the Query waited for its Memory or an MCPServer to be resolved (QUERY_WAIT_REASONS).',
  },
  ModelError: {
    phase: 'error',
    description:
      'A model call failed: the model answered an error or could not be reached, after the retries.',
  },
  ToolError: {
    phase: 'error',
    description:
      "The tool of a tool/<name> query failed (an agent's failing tool call goes back to the model instead).",
  },
  MemoryError: {
    phase: 'error',
    description:
      "The query's Memory failed: a named one not found, or reading or writing the conversation failed (one not resolved yet is waited for: MemoryNotReady).",
  },
  TargetNotFound: {
    phase: 'error',
    description: 'spec.target names no object of its type in the namespace (as the controller sees it).',
  },
  InvalidTarget: {
    phase: 'error',
    description:
      "The target cannot run as configured: an object it references is missing (an Agent's Model or Tool, a Team's member), a Team contains itself, a Model's address or Secret is not usable.",
  },
  InvalidQuery: {
    phase: 'error',
    description:
      "The Query's own spec cannot run: spec.input malformed, spec.timeout or spec.ttl not a duration, spec.target.type unknown.",
  },
  InvalidOutput: {
    phase: 'error',
    description:
      "The answer did not satisfy the Agent's spec.outputSchema (or the Query's responseFormat) after one repair round; the message names the violation.",
  },
  Rejected: {
    phase: 'error',
    description:
      "The tool of a tool/<name> query needed approval and was rejected, or its approval timed out with onTimeout reject (an agent's model is told instead and goes on).",
  },
  Canceled: {
    phase: 'canceled',
    description: 'spec.cancel was set, before the run started or during it (spelled like the phase).',
  },
  Orphaned: {
    phase: 'error',
    description:
      'The controller stopped while the query was running and its outcome was lost; the query is failed, not re-run (it may have had effects).',
  },
  Purged: {
    phase: 'error',
    description:
      "The query's broker stream was purged (the Query deleted) while a client followed it. Seen on the stream by the API service; never written on a condition.",
  },
  Failed: {
    phase: 'error',
    description:
      'Any other failure (e.g. an Agent out of maxTurns, an engine bug); the message says which. Also what a Query without a reason (an older controller) is read as when its phase is error.',
  },
} as const satisfies Record<string, EndReasonDef>;

export type QueryEndReason = keyof typeof QUERY_END_REASONS;

/** The reason of `Completed=False` (the query is pending or running). */
export const QUERY_RUNNING_REASON = 'Running';

/** The reason a phase implies when nothing more is known (an older controller's Queries, a bare outcome). */
export const REASON_OF_PHASE = {
  done: 'Succeeded',
  error: 'Failed',
  canceled: 'Canceled',
} as const satisfies Record<EndReasonDef['phase'], QueryEndReason>;

export function isQueryEndReason(value: unknown): value is QueryEndReason {
  return typeof value === 'string' && Object.hasOwn(QUERY_END_REASONS, value);
}

/**
 * The end reason of a Query that ended in `phase` with `reason` on its condition (or in an outcome):
 * that reason when it is one of ours and belongs to the phase, else the phase's own (a Query of an
 * older controller, an unknown reason of a newer one).
 */
export function endReasonOf(phase: EndReasonDef['phase'], reason: unknown): QueryEndReason {
  return isQueryEndReason(reason) && QUERY_END_REASONS[reason].phase === phase
    ? reason
    : REASON_OF_PHASE[phase];
}

/**
 * Why a pending Query has not started: the reason of its `Completed=False` condition while an
 * object it needs exists but has not been resolved by its controller yet (objects applied together
 * reach the controller in any order). Level-based, as controller-runtime requeues: the Query runs
 * once the object resolves, and ends `Timeout` if spec.timeout passes first (docs/controller.md).
 * An object that does not exist is not waited for: the run fails it with its end reason.
 */
export const QUERY_WAIT_REASONS = {
  MemoryNotReady: {
    description: "The Query's Memory exists but has no status.lastResolvedAddress yet.",
  },
  MCPServerNotReady: {
    description:
      'An MCPServer the target calls exists but has no address yet (no status.lastResolvedAddress, no spec.address.value).',
  },
  TargetNotReady: {
    description:
      "The Query's target, or an Agent, Team, Tool or Model it refers to, is not in the controller's cache yet: looked for again during the Query's first 5 s (objects applied together arrive in any order), then the run fails it as missing. Not written as a condition.",
  },
} as const satisfies Record<string, { description: string }>;

export type QueryWaitReason = keyof typeof QUERY_WAIT_REASONS;

export function isQueryWaitReason(value: unknown): value is QueryWaitReason {
  return typeof value === 'string' && Object.hasOwn(QUERY_WAIT_REASONS, value);
}
