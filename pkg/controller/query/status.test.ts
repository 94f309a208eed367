import { describe, expect, it } from 'vitest';
import type { Query } from '../../api/index.ts';
import { formatDuration } from '../runs/status.ts';
import { endedWithoutRun, finishedStatus, runningStatus } from './status.ts';

const q = {
  apiVersion: 'berth.dev/v1alpha1',
  kind: 'Query',
  metadata: { name: 'q', namespace: 'ns', generation: 2 },
  spec: { input: 'hi', target: { type: 'agent', name: 'a' } },
  status: { phase: 'running', startTime: '2026-01-01T00:00:00.000Z', message: 'old' },
} as unknown as Query;

describe('query status', () => {
  it('formats durations the way Go prints them', () => {
    expect(formatDuration(850)).toBe('850ms');
    expect(formatDuration(12_500)).toBe('12.5s');
    expect(formatDuration(184_200)).toBe('3m4.2s');
    expect(formatDuration(3_723_000)).toBe('1h2m3s');
  });

  it('running status carries startTime and a Completed=False condition', () => {
    const s = runningStatus(q, new Date('2026-01-01T00:00:00Z'));
    expect(s).toMatchObject({
      phase: 'running',
      startTime: '2026-01-01T00:00:00.000Z',
      observedGeneration: 2,
    });
    expect(s.conditions?.[0]).toMatchObject({ type: 'Completed', status: 'False', reason: 'Running' });
  });

  it('done status has response, usage, conversation/contextId, duration and clears the old message', () => {
    const s = finishedStatus(
      q,
      {
        phase: 'done',
        content: 'out',
        tokenUsage: { promptTokens: 1, completionTokens: 2, totalTokens: 3 },
        conversationId: 'c',
      },
      new Date('2026-01-01T00:00:01.500Z'),
    );
    expect(s).toMatchObject({
      phase: 'done',
      message: null,
      response: { target: { type: 'agent', name: 'a' }, content: 'out' },
      tokenUsage: { promptTokens: 1, completionTokens: 2, totalTokens: 3 },
      conversationId: 'c',
      a2a: { contextId: 'c' },
      completionTime: '2026-01-01T00:00:01.500Z',
      duration: '1.5s',
    });
  });

  it('error and canceled statuses carry their message and no response', () => {
    const e = finishedStatus(q, { phase: 'error', message: 'boom' }, new Date('2026-01-01T00:00:02Z'));
    expect(e).toMatchObject({ phase: 'error', message: 'boom', response: null });
    expect((e.conditions as Array<{ reason: string }>)[0]?.reason).toBe('Failed');
    const c = finishedStatus(
      q,
      { phase: 'canceled', message: 'query canceled' },
      new Date('2026-01-01T00:00:02Z'),
    );
    expect(c).toMatchObject({ phase: 'canceled', message: 'query canceled', tokenUsage: null });
  });

  const reasonOf = (s: Record<string, unknown>) => (s.conditions as Array<{ reason: string }>)[0]?.reason;
  const at = new Date('2026-01-01T00:00:02Z');

  it("the Completed condition carries the outcome's end reason", () => {
    const done = finishedStatus(
      q,
      { phase: 'done', content: 'x', tokenUsage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 } },
      at,
    );
    expect(reasonOf(done)).toBe('Succeeded');
    for (const reason of [
      'Timeout',
      'ModelError',
      'ToolError',
      'MemoryError',
      'TargetNotFound',
      'InvalidTarget',
      'InvalidQuery',
      'Failed',
    ] as const)
      expect(reasonOf(finishedStatus(q, { phase: 'error', reason, message: 'm' }, at))).toBe(reason);
    expect(reasonOf(finishedStatus(q, { phase: 'canceled', reason: 'Canceled', message: 'm' }, at))).toBe(
      'Canceled',
    );
  });

  it('an outcome without a reason, or with one of another phase, gets the reason of its phase', () => {
    expect(reasonOf(finishedStatus(q, { phase: 'canceled', message: 'm' }, at))).toBe('Canceled');
    // A reason that contradicts the phase is not written: the phase is what clients act on.
    const odd = { phase: 'error', reason: 'Succeeded', message: 'm' } as const;
    expect(reasonOf(finishedStatus(q, odd as never, at))).toBe('Failed');
  });

  it('a query ended without a run is Canceled (before it started) or Orphaned (by a restart)', () => {
    const canceled = endedWithoutRun(q, 'canceled', 'canceled before it started', at);
    expect(canceled).toMatchObject({ phase: 'canceled', message: 'canceled before it started' });
    expect(reasonOf(canceled)).toBe('Canceled');
    const orphaned = endedWithoutRun(q, 'error', 'controller restarted while the query was running', at);
    expect(orphaned).toMatchObject({
      phase: 'error',
      message: 'controller restarted while the query was running',
    });
    expect(reasonOf(orphaned)).toBe('Orphaned');
  });
});
