/**
 * A failure that knows why the query ends (the reason of its `Completed` condition), thrown where
 * that is known: a model call, a tool, the Memory, a missing target. Anything else thrown ends the
 * query as `Failed`; cancellation and the query's own timeout are told apart by the run itself.
 */
import type { QueryEndReason } from '../api/index.ts';
import { errorMessage } from './scope.ts';

export class QueryFailure extends Error {
  override name = 'QueryFailure';
  readonly reason: QueryEndReason;

  constructor(reason: QueryEndReason, message: string, options?: ErrorOptions) {
    super(message, options);
    this.reason = reason;
  }
}

/** `err` as a failure for `reason`, its message kept; a QueryFailure already says its own reason. */
export function failedWith(reason: QueryEndReason, err: unknown): QueryFailure {
  return err instanceof QueryFailure ? err : new QueryFailure(reason, errorMessage(err), { cause: err });
}

/**
 * `obj`, or a failure saying `<what> not found in namespace <namespace>`: `missing` is TargetNotFound
 * for the query's own target, InvalidTarget (the default) for what the target references.
 */
export function found<T>(
  obj: T | undefined,
  what: string,
  namespace: string,
  missing: QueryEndReason = 'InvalidTarget',
): T {
  if (!obj) throw new QueryFailure(missing, `${what} not found in namespace ${namespace}`);
  return obj;
}

/** The end reason of something a run threw (not canceled, not timed out). */
export function reasonOf(err: unknown): QueryEndReason {
  return err instanceof QueryFailure ? err.reason : 'Failed';
}
