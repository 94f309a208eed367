import type { Condition } from '../../api/index.ts';

// What the status of every run-owning kind (Query, Evaluation) is written with.

/** A duration as Kubernetes users read them (Go style): 850ms, 12.5s, 3m4.2s, 1h2m3s. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = Number(((ms % 60_000) / 1000).toFixed(3));
  return `${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${s}s`;
}

export function completedCondition(
  status: Condition['status'],
  reason: string,
  message: string,
  now: string,
  generation?: number,
): Condition {
  return {
    type: 'Completed',
    status,
    reason,
    message,
    lastTransitionTime: now,
    ...(generation === undefined ? {} : { observedGeneration: generation }),
  };
}
