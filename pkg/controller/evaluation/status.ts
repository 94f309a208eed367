import type { Evaluation } from '../../api/index.ts';
import { completedCondition, formatDuration } from '../runs/status.ts';
import type { EvaluateResult } from './call.ts';

/** A long LLM-judge explanation would bloat every watch event of the object: status keeps its start. */
export const MAX_REASONING = 4096;

export type EvaluationOutcome =
  | { phase: 'done'; result: EvaluateResult; attempts: number }
  | { phase: 'error'; message: string }
  | { phase: 'canceled'; message: string };

const REASONS = { done: 'Succeeded', error: 'Failed', canceled: 'Canceled' } as const;

/** Pending, waiting for something (its Query to finish): said in message and the condition. */
export function waitingStatus(e: Evaluation, message: string, now: Date): Record<string, unknown> {
  const ts = now.toISOString();
  return {
    phase: 'pending',
    message,
    conditions: [completedCondition('False', 'Waiting', message, ts, e.metadata.generation)],
    observedGeneration: e.metadata.generation,
  };
}

/** The pending → running transition; `message` says why a retry is under way, if one is. */
export function runningStatus(e: Evaluation, startedAt: number, message?: string): Record<string, unknown> {
  const ts = new Date(startedAt).toISOString();
  return {
    phase: 'running',
    startTime: ts,
    message: message ?? null,
    conditions: [
      completedCondition('False', 'Running', 'the evaluator is being called', ts, e.metadata.generation),
    ],
    observedGeneration: e.metadata.generation,
  };
}

/**
 * Status of a finished evaluation. A merge patch: what an earlier phase or run may have left
 * (message, score) is nulled when the new phase has none.
 */
export function finishedStatus(
  e: Evaluation,
  outcome: EvaluationOutcome,
  now: Date,
  startedAt?: number,
): Record<string, unknown> {
  const ts = now.toISOString();
  const started = startedAt ?? now.getTime();
  const done = outcome.phase === 'done' ? outcome.result : undefined;
  const message =
    outcome.phase === 'done'
      ? `${outcome.result.passed ? 'passed' : 'failed'} with score ${outcome.result.score}`
      : outcome.message;
  return {
    phase: outcome.phase,
    score: done ? done.score : null,
    passed: done ? done.passed : null,
    reasoning: done?.reasoning ? done.reasoning.slice(0, MAX_REASONING) : null,
    metrics: done?.metrics && Object.keys(done.metrics).length ? done.metrics : null,
    message: done ? null : message,
    startTime: new Date(started).toISOString(),
    completionTime: ts,
    duration: formatDuration(now.getTime() - started),
    conditions: [completedCondition('True', REASONS[outcome.phase], message, ts, e.metadata.generation)],
    observedGeneration: e.metadata.generation,
  };
}

/** An evaluation that ends without a call: canceled before it started, or a definite error. */
export function endedWithoutCall(e: Evaluation, phase: 'error' | 'canceled', message: string, now: Date) {
  return finishedStatus(e, { phase, message }, now, Date.parse(e.status?.startTime ?? '') || now.getTime());
}
