/**
 * How a chat completion answers the end of its Query: one table from the end reason (the reason of
 * the Query's `Completed` condition, or of the engine's error chunk on the stream) to the HTTP
 * status and OpenAI error. The non-streaming answer and a stream that fails before its first chunk
 * use the status; a stream that already began (HTTP 200 sent) puts type and code in its error frame.
 */
import {
  endReasonOf,
  isQueryEndReason,
  type Query,
  type QueryEndReason,
  type TokenUsage,
} from '../../api/index.ts';
import type { ErrorCode, StatusOf } from '../../http/index.ts';
import { CompatError, type OpenAIErrorType } from './errors.ts';

/** A row of END_ANSWERS: a code of ERROR_CODES with a status the registry gives it (type-checked). */
export type EndAnswer = {
  [C in ErrorCode]: { status: StatusOf<C>; type: OpenAIErrorType; code: C };
}[ErrorCode];

/**
 * Every failure answers `x-should-retry: false`: the query ran, so an SDK retry would start
 * another one (and a timed-out one keeps running). A 4xx says the target or the request cannot run.
 */
export const END_ANSWERS = {
  Timeout: { status: 504, type: 'timeout_error', code: 'timeout' },
  ModelError: { status: 502, type: 'server_error', code: 'model_error' },
  ToolError: { status: 502, type: 'server_error', code: 'tool_error' },
  MemoryError: { status: 502, type: 'server_error', code: 'memory_error' },
  TargetNotFound: { status: 404, type: 'not_found_error', code: 'model_not_found' },
  InvalidTarget: { status: 500, type: 'server_error', code: 'invalid_target' },
  InvalidQuery: { status: 400, type: 'invalid_request_error', code: 'invalid_query' },
  InvalidOutput: { status: 502, type: 'server_error', code: 'invalid_output' },
  Rejected: { status: 403, type: 'permission_error', code: 'tool_call_rejected' },
  Canceled: { status: 500, type: 'server_error', code: 'query_canceled' },
  Orphaned: { status: 500, type: 'server_error', code: 'query_orphaned' },
  Purged: { status: 500, type: 'server_error', code: 'query_purged' },
  Failed: { status: 500, type: 'server_error', code: 'query_failed' },
} as const satisfies Record<Exclude<QueryEndReason, 'Succeeded'>, EndAnswer>;

/** The end of a finished Query as the completion sees it. */
export interface QueryEnd {
  query?: Query;
  reason: QueryEndReason;
  message: string;
  usage?: TokenUsage;
}

/** A completion failed because its Query ended so: the answer of END_ANSWERS for `reason`. */
export class QueryEndedError extends CompatError {
  override name = 'QueryEndedError';
  readonly reason: Exclude<QueryEndReason, 'Succeeded'>;

  constructor(reason: Exclude<QueryEndReason, 'Succeeded'>, message: string) {
    const a: EndAnswer = END_ANSWERS[reason];
    // The status is the code's in ERROR_CODES: the same as the row's (EndAnswer checks it).
    super(a.code, message, { type: a.type, retryable: false });
    this.reason = reason;
  }
}

/** The end of a Query in a terminal phase; a Query of an older controller (no reason) by its phase. */
export function endOf(query: Query): QueryEnd {
  const status = query.status ?? {};
  const phase = status.phase === 'done' || status.phase === 'canceled' ? status.phase : 'error';
  const completed = status.conditions?.find((c) => c.type === 'Completed' && c.status === 'True');
  return {
    query,
    reason: endReasonOf(phase, completed?.reason),
    message: status.message ?? `query ${status.phase}`,
    usage: status.tokenUsage,
  };
}

/**
 * The end an error chunk on the Query's stream says. The engine names its reason; a chunk without
 * one (an older engine, or the broker's own: purged, idle or never-started stream) by its code.
 */
export function endOfStreamError(e: { message?: string; type?: string; code?: string; reason?: unknown }) {
  const message = e.message ?? 'query failed';
  if (isQueryEndReason(e.reason)) return { reason: e.reason, message };
  const reason: QueryEndReason =
    e.code === 'purged'
      ? 'Purged'
      : e.code === 'canceled'
        ? 'Canceled'
        : e.type === 'timeout_error' || e.code === 'timeout'
          ? 'Timeout'
          : 'Failed';
  return { reason, message };
}

/** The error a completion answers for an end that is not Succeeded. */
export function failureOf(end: Pick<QueryEnd, 'reason' | 'message'>): QueryEndedError {
  return new QueryEndedError(end.reason === 'Succeeded' ? 'Failed' : end.reason, end.message);
}
