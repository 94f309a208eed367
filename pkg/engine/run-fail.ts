/**
 * How a run that did not succeed ends: canceled (told apart from the Query's own timeout), timed
 * out, or failed with its reason; the stream gets an error chunk naming the reason and is completed.
 */
import { SpanStatusCode } from '@opentelemetry/api';
import type { QueryEndReason } from '../api/index.ts';
import { redactValues } from '../log/index.ts';
import type { StreamError } from './chunks.ts';
import type { QueryOutcome, RunContext } from './contract.ts';
import { reasonOf } from './failure.ts';
import { errorMessage, type Scope } from './scope.ts';
import type { startRootSpan } from './tracing.ts';
import { boundedText } from './upstream.ts';

export async function fail(
  scope: Scope,
  err: unknown,
  o: {
    ctx: RunContext;
    timedOut: boolean;
    timeoutText: string;
    conversationId: string | undefined;
    root: ReturnType<typeof startRootSpan>;
    started: number;
  },
): Promise<QueryOutcome> {
  const durationMs = Math.round(performance.now() - o.started);
  if (o.ctx.signal.aborted) {
    const message = 'query canceled';
    // The reason rides along in the stream's error chunk, so a reader need not wait for the status.
    scope.stream?.error(withReason({ message, type: 'canceled', code: 'canceled' }, 'Canceled'));
    await scope.stream?.complete();
    scope.emit('QueryExecutionCanceled', `Query ${scope.name} canceled`, { durationMs }, true);
    scope.log.info({ durationMs }, 'query canceled');
    o.root.setStatus({ code: SpanStatusCode.ERROR, message });
    return { phase: 'canceled', reason: 'Canceled', message, conversationId: o.conversationId };
  }
  // Whatever an upstream answered, the status message, events and logs stay small, and hold none of
  // the credentials the query sent (an upstream may quote the key it was given).
  const message = o.timedOut
    ? `query timed out after ${o.timeoutText} (spec.timeout)`
    : boundedText(redactValues(errorMessage(err), scope.secrets));
  const reason = o.timedOut ? 'Timeout' : reasonOf(err);
  scope.stream?.error(
    withReason(
      {
        message,
        type: o.timedOut ? 'timeout_error' : 'server_error',
        code: o.timedOut ? 'timeout' : 'query_error',
      },
      reason,
    ),
  );
  await scope.stream?.complete();
  scope.emit('QueryExecutionError', message, { error: message, durationMs }, true);
  scope.log.warn({ durationMs, error: message, reason }, 'query failed');
  o.root.setStatus({ code: SpanStatusCode.ERROR, message });
  const usage = scope.usage.totalTokens > 0 ? { tokenUsage: { ...scope.usage } } : {};
  return { phase: 'error', reason, message, conversationId: o.conversationId, ...usage };
}

/** An error chunk with the end reason beside OpenAI's type and code (readers that know it map it). */
function withReason(error: StreamError, reason: QueryEndReason): StreamError & { reason: QueryEndReason } {
  return { ...error, reason };
}
