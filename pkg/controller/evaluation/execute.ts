/**
 * One evaluation's evaluator call, off the reconcile worker: the call with retries under the
 * evaluation's deadline, its status while it runs (`running` once it outlasts
 * RUNNING_STATUS_DELAY_MS or at its first retry, then retry messages), telemetry, and the outcome
 * kept on the run for the reconciler to write.
 */
import { type Evaluation, Kinds } from '../../api/index.ts';
import type { EngineFetch } from '../../engine/http.ts';
import { boundedText } from '../../engine/upstream.ts';
import { type Client, patchStatus } from '../../kube/client/index.ts';
import { type Logger, redactValues, truncateForLog } from '../../log/index.ts';
import { queueStatusWrite, RUNNING_STATUS_DELAY_MS, type Run } from '../runs/index.ts';
import { callEvaluator } from './call.ts';
import { type EvaluationOutcome, runningStatus } from './status.ts';
import type { EvaluatorTarget, Subject } from './subject.ts';
import type { EvaluationTelemetry } from './telemetry.ts';

export type EvaluationRun = Run<EvaluationOutcome>;

export interface ExecuteDeps {
  client: Client;
  fetch: EngineFetch;
  telemetry: EvaluationTelemetry;
  retryInitialMs: number;
  retryMaxMs: number;
}

export interface Execution {
  e: Evaluation;
  run: EvaluationRun;
  subject: Subject;
  target: EvaluatorTarget;
  timeoutMs: number;
  timeoutText: string;
  /** False once the run ended or is no longer this process's: nothing is written then. */
  stillRunning(): boolean;
  log: Logger;
}

/** Status writes of a run in flight, in order; the final write waits for them (run.statusWrite). */
function runningWrites(deps: ExecuteDeps, x: Execution) {
  let written = false;
  const write = (message?: string) => {
    if (!x.stillRunning()) return;
    const status = written ? { message: message ?? null } : runningStatus(x.e, x.run.startedAt, message);
    written = true;
    queueStatusWrite(x.run, () => patchStatus(deps.client, Kinds.Evaluation, x.e, status), x.log);
  };
  const timer = setTimeout(() => write(), RUNNING_STATUS_DELAY_MS);
  return {
    retrying: (message: string) => {
      clearTimeout(timer);
      write(message);
    },
    stop: () => clearTimeout(timer),
  };
}

export async function execute(deps: ExecuteDeps, x: Execution): Promise<EvaluationOutcome> {
  const { run, subject, target, log } = x;
  const trace = await deps.telemetry.begin(x.e, subject, target);
  const live = runningWrites(deps, x);
  log.info(
    { url: target.url, type: subject.type, input: truncateForLog(subject.input) },
    'calling the evaluator',
  );
  // An evaluator may quote the headers it was sent (values from Secrets) in its error answers: none
  // of them reaches the Evaluation's status, events or logs.
  const scrub = (text: string) => redactValues(text, Object.values(target.headers));
  let outcome: EvaluationOutcome;
  try {
    const { result, attempts } = await callEvaluator({
      fetch: deps.fetch,
      url: target.url,
      headers: target.headers,
      body: {
        ...subject,
        ...(Object.keys(target.parameters).length ? { parameters: target.parameters } : {}),
      },
      signal: run.ctl.signal,
      deadline: run.startedAt + x.timeoutMs,
      timeoutText: x.timeoutText,
      retryInitialMs: deps.retryInitialMs,
      retryMaxMs: deps.retryMaxMs,
      onAttempt: (n) => trace.attempt(n),
      onRetry: (n, problem, delayMs) => {
        const said = scrub(problem);
        log.warn({ attempt: n, problem: said, retryInMs: delayMs }, 'evaluator call failed; retrying');
        live.retrying(`evaluator call ${n} failed (${said}); retrying`);
      },
    });
    outcome = { phase: 'done', result, attempts };
  } catch (err) {
    outcome = run.ctl.signal.aborted
      ? { phase: 'canceled', message: `evaluation ${run.abortReason ?? 'canceled'}` }
      : { phase: 'error', message: boundedText(scrub(err instanceof Error ? err.message : String(err))) };
  }
  live.stop();
  const ms = Date.now() - run.startedAt;
  trace.end(outcome, ms);
  const o = outcome;
  log.info(
    {
      phase: o.phase,
      ms,
      ...(o.phase === 'done'
        ? { score: o.result.score, passed: o.result.passed, attempts: o.attempts }
        : { message: o.message }),
    },
    'evaluation ended',
  );
  return outcome;
}
