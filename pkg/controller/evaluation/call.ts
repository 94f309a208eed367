/**
 * The evaluator HTTP contract (docs/evaluations.md): `POST {address}/evaluate` with
 * `{type, input, output, parameters?, query?}` answers `{score 0..1, passed, reasoning?, metrics?}`.
 * A call retries with jittered backoff on what may pass (5xx, 408, 429, refused or dropped
 * connections, a body cut short) until it answers or the evaluation's deadline; a 4xx or an answer
 * that breaks the contract ends it at once, because asking again would get the same answer.
 */
import { z } from 'zod';
import type { EvaluationType } from '../../api/index.ts';
import { describeNetworkError, type EngineFetch } from '../../engine/http.ts';
import { upstreamErrorIn } from '../../engine/upstream.ts';
import { jitteredBackoff, sleep } from '../../kube/backoff.ts';

/** What a query evaluation tells the evaluator about the Query it scores. */
export interface QueryContext {
  name: string;
  namespace: string;
  target?: { type: string; name: string };
  /** The Query's spec.input as given: a string or a message list. */
  input: unknown;
  response: string;
  conversationId?: string;
  tokenUsage?: { promptTokens: number; completionTokens: number; totalTokens: number };
}

export interface EvaluateRequest {
  type: EvaluationType;
  input: string;
  output: string;
  parameters?: Record<string, string>;
  query?: QueryContext;
}

export const evaluateResultSchema = z.object({
  score: z.number().min(0).max(1),
  passed: z.boolean(),
  reasoning: z.string().optional(),
  metrics: z.record(z.string(), z.number()).optional(),
});
export type EvaluateResult = z.infer<typeof evaluateResultSchema>;

/** `{address}/evaluate`, keeping the address's own path (and query string). */
export function evaluateUrl(address: string): string {
  const u = new URL(address);
  u.pathname = `${u.pathname.replace(/\/+$/, '')}/evaluate`;
  return u.toString();
}

/** A failed attempt; `retryable` when another attempt may succeed. */
export class AttemptError extends Error {
  readonly retryable: boolean;
  readonly status?: number;
  constructor(message: string, retryable: boolean, status?: number) {
    super(message);
    this.name = 'AttemptError';
    this.retryable = retryable;
    this.status = status;
  }
}

export interface CallOptions {
  fetch: EngineFetch;
  url: string;
  body: EvaluateRequest;
  headers?: Record<string, string>;
  /** Aborted on cancel, deletion or shutdown: the call in flight is dropped at once. */
  signal: AbortSignal;
  /** Epoch ms by which an answer must have come (spec.timeout from the start). */
  deadline: number;
  /** For the message when the deadline passes, e.g. `5m`. */
  timeoutText: string;
  retryInitialMs: number;
  retryMaxMs: number;
  /** Before each retry: what failed and how long until the next attempt. */
  onRetry?(attempt: number, problem: string, delayMs: number): void;
  /** Around each attempt (spans). */
  onAttempt?(attempt: number): { end(err?: AttemptError): void };
}

const RETRYABLE_STATUS = (s: number) => s >= 500 || s === 408 || s === 429;
const snippet = (text: string) => text.replace(/\s+/g, ' ').trim().slice(0, 300);

async function attempt(o: CallOptions, signal: AbortSignal, body: string): Promise<EvaluateResult> {
  let res: Response;
  let text: string;
  try {
    res = await o.fetch(o.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...o.headers },
      body,
      signal,
      // Read under the evaluator cap (an error answer: its start only); a redirect to another
      // origin carries none of the Evaluator's headers.
      upstream: { kind: 'evaluator', configured: Object.keys(o.headers ?? {}) },
    });
    // Inside the try: a connection dropped while the body arrives is as retryable as a refused one.
    text = await res.text();
  } catch (err) {
    if (signal.aborted) throw signal.reason ?? err;
    // An answer over its cap or a refused redirect would be the same next time: not retried.
    throw new AttemptError(describeNetworkError(err), !upstreamErrorIn(err));
  }
  if (!res.ok) {
    const detail = snippet(text);
    throw new AttemptError(
      `HTTP ${res.status}${detail ? `: ${detail}` : ''}`,
      RETRYABLE_STATUS(res.status),
      res.status,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new AttemptError(`the answer is not JSON: ${snippet(text).slice(0, 120)}`, false, res.status);
  }
  const parsed = evaluateResultSchema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`);
    throw new AttemptError(`the answer breaks the contract: ${issues.join('; ')}`, false, res.status);
  }
  return parsed.data;
}

/**
 * Calls the evaluator until it answers, retrying what may pass. Resolves with the result and the
 * number of attempts; rejects with the abort reason when `signal` aborts, else with an Error that
 * says what failed (the evaluation's message).
 */
export async function callEvaluator(o: CallOptions): Promise<{ result: EvaluateResult; attempts: number }> {
  const body = JSON.stringify(o.body);
  const timeout = (n: number, last?: string) =>
    new Error(
      `the evaluator did not answer within ${o.timeoutText} (${n} attempt${n === 1 ? '' : 's'}${last ? `; last: ${last}` : ''})`,
    );
  let last: string | undefined;
  for (let n = 1; ; n++) {
    const remaining = o.deadline - Date.now();
    if (remaining <= 0) throw timeout(n - 1, last);
    // setTimeout (under AbortSignal.timeout) fires at once beyond 2^31-1 ms; retries re-check later.
    const capped = remaining > 2 ** 31 - 1;
    const deadline = AbortSignal.timeout(capped ? 2 ** 31 - 1 : remaining);
    const signal = AbortSignal.any([o.signal, deadline]);
    const span = o.onAttempt?.(n);
    try {
      const result = await attempt(o, signal, body);
      span?.end();
      return { result, attempts: n };
    } catch (err) {
      if (o.signal.aborted) {
        span?.end(new AttemptError('aborted', false));
        throw o.signal.reason ?? err;
      }
      // The deadline's own timer fired: a timeout, even when it fired a millisecond before
      // Date.now() reaches the deadline (timers run on the monotonic clock, not the wall clock).
      if (deadline.aborted && (!capped || Date.now() >= o.deadline)) {
        span?.end(new AttemptError('timed out', false));
        throw timeout(n, last);
      }
      const e = err instanceof AttemptError ? err : new AttemptError(String(err), false);
      span?.end(e);
      if (!e.retryable) throw new Error(`evaluator call failed: ${e.message}`);
      last = e.message;
    }
    const delay = Math.min(jitteredBackoff(n - 1, o.retryInitialMs, o.retryMaxMs), o.deadline - Date.now());
    if (delay <= 0) throw timeout(n, last);
    o.onRetry?.(n, last ?? '', delay);
    await sleep(delay, o.signal);
    if (o.signal.aborted) throw o.signal.reason;
  }
}
