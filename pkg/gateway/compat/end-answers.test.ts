import { describe, expect, it } from 'vitest';
import { QUERY_END_REASONS, type Query } from '../../api/index.ts';
import { END_ANSWERS, endOf, endOfStreamError, failureOf, QueryEndedError } from './end-answers.ts';

const ended = (phase: string, reason?: string, message = 'it ended') =>
  ({
    metadata: { name: 'chat-query-1' },
    status: {
      phase,
      message,
      tokenUsage: { promptTokens: 1, completionTokens: 2, totalTokens: 3 },
      conditions: reason ? [{ type: 'Completed', status: 'True', reason, message }] : undefined,
    },
  }) as unknown as Query;

describe('end answers', () => {
  it('answer every end reason but Succeeded, never retryable', () => {
    const failures = Object.keys(QUERY_END_REASONS).filter((r) => r !== 'Succeeded');
    expect(Object.keys(END_ANSWERS).sort()).toEqual(failures.sort());
    for (const reason of failures) {
      const err = failureOf({ reason: reason as keyof typeof END_ANSWERS, message: 'm' });
      expect(err).toBeInstanceOf(QueryEndedError);
      expect(err.retryable).toBe(false);
      expect(err.status).toBe(END_ANSWERS[reason as keyof typeof END_ANSWERS].status);
    }
  });

  it('a timed-out Query is a 504 timeout_error, a model failure a 502 model_error', () => {
    const timeout = failureOf(endOf(ended('error', 'Timeout')));
    expect(timeout).toMatchObject({
      status: 504,
      type: 'timeout_error',
      code: 'timeout',
      message: 'it ended',
    });
    const model = failureOf(endOf(ended('error', 'ModelError')));
    expect(model).toMatchObject({ status: 502, type: 'server_error', code: 'model_error' });
  });

  it("reads the Query's end: reason from the Completed condition, message and usage from status", () => {
    expect(endOf(ended('error', 'MemoryError'))).toMatchObject({
      reason: 'MemoryError',
      message: 'it ended',
      usage: { totalTokens: 3 },
    });
    expect(endOf(ended('done', 'Succeeded')).reason).toBe('Succeeded');
  });

  it("an older controller's Query (no condition, or only the phase's reason) is answered by its phase", () => {
    expect(endOf(ended('error')).reason).toBe('Failed');
    expect(endOf(ended('canceled')).reason).toBe('Canceled');
    expect(endOf(ended('done')).reason).toBe('Succeeded');
    // Its timeout is generic now: the message is no longer read.
    expect(failureOf(endOf(ended('error', 'Failed', 'query timed out after 5m')))).toMatchObject({
      status: 500,
      code: 'query_failed',
    });
    // An unknown reason (a newer controller) or one of another phase: the phase's.
    expect(endOf(ended('error', 'Exploded')).reason).toBe('Failed');
    expect(endOf(ended('done', 'Timeout')).reason).toBe('Succeeded');
  });

  it("an error chunk's end: the engine's reason, else its code (older engines, the broker's own frames)", () => {
    expect(
      endOfStreamError({ message: 'm', type: 'server_error', code: 'query_error', reason: 'ToolError' }),
    ).toEqual({
      reason: 'ToolError',
      message: 'm',
    });
    expect(endOfStreamError({ type: 'timeout_error', code: 'timeout' }).reason).toBe('Timeout');
    expect(endOfStreamError({ type: 'timeout_error', code: 'idle_timeout' }).reason).toBe('Timeout');
    expect(endOfStreamError({ type: 'server_error', code: 'purged' }).reason).toBe('Purged');
    expect(endOfStreamError({ type: 'canceled', code: 'canceled' }).reason).toBe('Canceled');
    expect(endOfStreamError({ type: 'server_error', code: 'query_error' })).toEqual({
      reason: 'Failed',
      message: 'query failed',
    });
  });
});
