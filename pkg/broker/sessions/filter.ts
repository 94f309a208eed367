import type { SessionFilter, SessionView } from './types.ts';

/**
 * Whether a session view passes a list filter: the memory store's lists and every backend's live
 * frames (the hub filters views without a query). `ignoreStatus` for the per-status counts.
 */
export function matchesView(v: SessionView, f: SessionFilter, ignoreStatus = false): boolean {
  if (f.session_id !== undefined && v.sessionId !== f.session_id) return false;
  if (!ignoreStatus && f.status !== undefined && v.status !== f.status) return false;
  if (f.dateFrom !== undefined && Date.parse(v.lastActivity) < Date.parse(f.dateFrom)) return false;
  if (f.dateTo !== undefined && Date.parse(v.firstActivity) > Date.parse(f.dateTo)) return false;
  if (f.search) {
    const needle = f.search.toLowerCase();
    const hay = [
      v.sessionId,
      v.name,
      ...v.conversations,
      ...v.queries.flatMap((q) => [q.queryId, q.queryName ?? '']),
    ];
    if (!hay.some((h) => h.toLowerCase().includes(needle))) return false;
  }
  return true;
}
