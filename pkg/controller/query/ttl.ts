import type { Query } from '../../api/index.ts';
import { parseDuration } from '../../engine/duration.ts';
import type { ReconcileResult } from '../../kube/controller.ts';

const DAY_MS = 86_400_000;
const DEFAULT_TTL_MS = 720 * 3_600_000;

/** spec.ttl (default 720h); an unparsable one counts as the default rather than "delete now". */
export function ttlMs(q: Query): number {
  try {
    return parseDuration(q.spec.ttl ?? '720h');
  } catch {
    return DEFAULT_TTL_MS;
  }
}

/**
 * When to look at a finished Query again: at its expiry, but at least daily, so a TTL of weeks
 * does not hold a timer for weeks (and a clock change is noticed). 0 means expired.
 */
export function ttlRequeue(q: Query, completedAt: Date, now = Date.now()): ReconcileResult {
  const remaining = completedAt.getTime() + ttlMs(q) - now;
  return { requeueAfterMs: Math.max(0, Math.min(remaining, DAY_MS)) };
}

/** When a finished Query completed: status.completionTime, else its creation (status lost). */
export function completedAt(q: Query): Date {
  const base = q.status?.completionTime ?? q.metadata.creationTimestamp;
  return base ? new Date(base) : new Date();
}
