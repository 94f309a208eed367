/**
 * A pending Query whose Memory or MCPServer exists but is not resolved yet (the engine's
 * `waitsFor`, pkg/engine/readiness.ts): it stays pending with `Completed=False` and the reason
 * (`MemoryNotReady`, `MCPServerNotReady`), is looked at again with backoff — and at once when a
 * Memory or MCPServer of its namespace changes (`waitingQueries`) — and runs once resolved. The wait
 * counts against spec.timeout from the moment it began (the condition's lastTransitionTime): past
 * it the Query ends `error`, reason `Timeout`, without a run. Level-based, as controller-runtime's
 * requeues: nothing here is kept in memory, so a new leader carries on from the status.
 */
import { DEFAULT_MEMORY_NAME, isQueryWaitReason, Kinds, type Query } from '../../api/index.ts';
import { parseDuration } from '../../engine/duration.ts';
import type { Unresolved } from '../../engine/readiness.ts';
import { DEFAULT_TIMEOUT as DEFAULT_QUERY_TIMEOUT } from '../../engine/run.ts';
import type { InformerCache } from '../../kube/cache.ts';
import type { Request } from '../../kube/controller.ts';
import { completedCondition } from '../runs/status.ts';
import { endedWithoutRun } from './status.ts';

/** Backoff between looks while nothing wakes the Query earlier: doubling, 250 ms → 30 s. */
const MIN_RETRY_MS = 250;
const MAX_RETRY_MS = 30_000;

/** The Query's `Completed=False` waiting condition, when it has one. */
function waitCondition(q: Query) {
  return q.status?.conditions?.find(
    (c) => c.type === 'Completed' && c.status === 'False' && isQueryWaitReason(c.reason),
  );
}

/** spec.timeout in ms; undefined when it is not a duration (the run fails that as InvalidQuery). */
function timeoutOf(q: Query): number | undefined {
  try {
    return parseDuration(q.spec.timeout ?? DEFAULT_QUERY_TIMEOUT);
  } catch {
    return undefined;
  }
}

/** When the Query began to wait (the condition's transition time), else undefined. */
export function waitingSince(q: Query): number | undefined {
  const at = Date.parse(waitCondition(q)?.lastTransitionTime ?? '');
  return Number.isFinite(at) ? at : undefined;
}

/** How much of spec.timeout a Query that waited has spent by `now` (0 when it never waited). */
export function spentWaiting(q: Query, now: number): number {
  const since = waitingSince(q);
  return since === undefined ? 0 : Math.max(0, now - since);
}

/** What a pending Query the engine says cannot run yet comes to now. */
export type DependencyStep =
  /** spec.timeout is not a duration: run it, the run fails it as InvalidQuery. */
  | { kind: 'run' }
  /** Write `status` (conditional on the version read), then look again after `requeueAfterMs`. */
  | { kind: 'wait'; status?: Record<string, unknown>; requeueAfterMs: number }
  /** spec.timeout passed while it waited: end it with this final status. */
  | { kind: 'timeout'; status: Record<string, unknown> };

export function dependencyStep(q: Query, blocker: Unresolved, now: Date): DependencyStep {
  if (blocker.until !== undefined) {
    // Not in the cache yet, the Query a few seconds old: most likely applied with it. Looked for
    // again shortly (a Memory appearing enqueues it at once), nothing written; past `until` the
    // engine no longer waits for it and the run fails it as missing.
    const left = blocker.until - now.getTime();
    return { kind: 'wait', requeueAfterMs: Math.max(1, Math.min(left + 10, 4 * MIN_RETRY_MS)) };
  }
  const timeoutMs = timeoutOf(q);
  if (timeoutMs === undefined) return { kind: 'run' };
  const since = waitingSince(q) ?? now.getTime();
  const deadline = since + timeoutMs;
  if (now.getTime() >= deadline) {
    const text = q.spec.timeout ?? DEFAULT_QUERY_TIMEOUT;
    const message = `query timed out after ${text} (spec.timeout) ${blocker.message}`;
    return { kind: 'timeout', status: endedWithoutRun(q, 'error', message, now, 'Timeout') };
  }
  const waited = now.getTime() - since;
  const backoff = Math.min(MAX_RETRY_MS, Math.max(MIN_RETRY_MS, waited)) * (0.8 + Math.random() * 0.4);
  // Never later than the deadline, so the Query ends on time even if nothing changes.
  const requeueAfterMs = Math.ceil(Math.min(backoff, deadline - now.getTime() + 10));
  const current = waitCondition(q);
  if (current?.reason === blocker.reason && current.message === blocker.message)
    return { kind: 'wait', requeueAfterMs };
  const ts = new Date(since).toISOString();
  const condition = completedCondition('False', blocker.reason, blocker.message, ts, q.metadata.generation);
  return {
    kind: 'wait',
    requeueAfterMs,
    status: { phase: 'pending', conditions: [condition], observedGeneration: q.metadata.generation },
  };
}

const isPending = (q: Query) => (q.status?.phase ?? 'pending') === 'pending';

/** A pending Query using the Memory `memory` (waiting for it or not: one not found yet has no condition). */
const usesMemory = (q: Query, memory: string | undefined) =>
  isPending(q) && (q.spec.memory?.name ?? DEFAULT_MEMORY_NAME) === memory;

/** A pending Query waiting for an MCPServer (which one, its condition says in words only). */
const waitsOnServer = (q: Query) => isPending(q) && waitCondition(q)?.reason === 'MCPServerNotReady';

/**
 * The pending Queries a change of a Memory or MCPServer may release: those of its namespace using
 * that Memory, or waiting for an MCPServer. Read from the cache, a scan of one namespace; a Query
 * enqueued that was not waiting is a no-op reconcile (its run is registered by uid).
 */
export function waitingQueries(
  cache: InformerCache,
  kind: 'Memory' | 'MCPServer',
  obj: { metadata?: { namespace?: string; name?: string } },
): Request[] {
  const namespace = obj.metadata?.namespace ?? '';
  const queries = cache.list(Kinds.Query, namespace) ?? [];
  const match = kind === 'Memory' ? (q: Query) => usesMemory(q, obj.metadata?.name) : waitsOnServer;
  return queries.filter(match).map((q) => ({ namespace, name: q.metadata.name }));
}
