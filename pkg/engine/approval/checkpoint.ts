/**
 * The checkpoint of a pausing run as it goes on the Query: Secret values the run handed out are
 * scrubbed from every string (a tool may echo its credential), and its size is capped so the Query
 * stays well under the API server's object limit (~1.5 MiB in etcd): ENGINE_MAX_CHECKPOINT_BYTES,
 * default 512 KiB. A larger conversation cannot wait: the query ends in error saying so.
 */
import type { PendingApproval } from '../../api/index.ts';
import { REDACTED } from '../../log/index.ts';
import { QueryFailure } from '../failure.ts';
import { formatBytes } from '../upstream.ts';
import type { Checkpoint } from './types.ts';

export const DEFAULT_MAX_CHECKPOINT_BYTES = 512 * 1024;

export function maxCheckpointBytes(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.ENGINE_MAX_CHECKPOINT_BYTES);
  return Number.isFinite(n) && n > 0 ? Math.min(n, 1024 * 1024) : DEFAULT_MAX_CHECKPOINT_BYTES;
}

/**
 * `value` with Secret values replaced in its strings, as plain JSON (what status can hold). Only the
 * values: the conversation is resumed from this, so nothing else of it may change (no capping).
 */
function scrubbed<T>(value: T, secrets: Set<string>): T {
  const values = [...secrets].filter((v) => v.length >= 3).sort((a, b) => b.length - a.length);
  const text = JSON.stringify(value, (_k, v: unknown) => {
    if (typeof v !== 'string' || values.length === 0) return v;
    let out = v;
    for (const secret of values) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out;
  });
  return JSON.parse(text) as T;
}

/** The checkpoint and pending approvals as written to status; throws a QueryFailure when too large. */
export function storable(
  checkpoint: Checkpoint,
  pending: PendingApproval[],
  secrets: Set<string>,
): { checkpoint: Record<string, unknown>; pending: PendingApproval[] } {
  const cp = scrubbed(checkpoint, secrets);
  const p = scrubbed(pending, secrets);
  const bytes = Buffer.byteLength(JSON.stringify(cp)) + Buffer.byteLength(JSON.stringify(p));
  const max = maxCheckpointBytes();
  if (bytes > max)
    throw new QueryFailure(
      'Failed',
      `cannot wait for approval: the conversation to keep is ${formatBytes(bytes)}, over ENGINE_MAX_CHECKPOINT_BYTES (${formatBytes(max)})`,
    );
  return { checkpoint: cp as unknown as Record<string, unknown>, pending: p };
}
