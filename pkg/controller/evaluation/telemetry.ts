/**
 * What an evaluation records in the broker, like a query: operation events
 * (`EvaluationStart`/`Complete`/`Error`/`Canceled`, keyed by the evaluation's name so
 * `GET /events/{name}` returns them) through the engine's EventQueue, and one trace per evaluation
 * (root span `evaluation`, a child `evaluator.call` per attempt) exported over OTLP.
 */

import { ROOT_CONTEXT, type Span, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Evaluation } from '../../api/index.ts';
import { EventQueue } from '../../engine/event-queue.ts';
import { createHttpClient, type HttpClient } from '../../engine/http.ts';
import { cut } from '../../engine/scope.ts';
import { createTracing, SESSION_ATTRIBUTE, startRootSpan, type Tracing } from '../../engine/tracing.ts';
import { brokerCredentials } from '../../http/service-token/index.ts';
import type { Logger } from '../../log/index.ts';
import type { AttemptError } from './call.ts';
import type { EvaluationOutcome } from './status.ts';
import type { EvaluatorTarget, Subject } from './subject.ts';

export interface EvaluationTrace {
  /** A span around one evaluator call. */
  attempt(n: number): { end(err?: AttemptError): void };
  end(outcome: EvaluationOutcome, durationMs: number): void;
}

export class EvaluationTelemetry {
  readonly #events: EventQueue | undefined;
  readonly #tracing: Tracing;

  /** `tracing`: instead of exporting spans to the broker (tests). */
  constructor(opts: { brokerUrl?: string; http: HttpClient; logger: Logger; tracing?: Tracing }) {
    const brokerUrl = opts.brokerUrl?.replace(/\/+$/, '') || undefined;
    this.#events = brokerUrl
      ? new EventQueue({ url: brokerUrl, post: opts.http.postJson, logger: opts.logger })
      : undefined;
    const credentials = brokerCredentials([brokerUrl]);
    this.#tracing =
      opts.tracing ??
      createTracing(brokerUrl, 'berth-controller', process.env, (url) => credentials.headersFor(url));
  }

  /** Starts an evaluation's trace and sends EvaluationStart. */
  begin(e: Evaluation, subject: Subject, target: EvaluatorTarget): EvaluationTrace {
    const name = e.metadata.name;
    const namespace = e.metadata.namespace ?? 'default';
    const evaluator = e.spec.evaluator.name;
    // queryId is the broker's key of an operation record: the evaluation's name (wire convention).
    const data: Record<string, string> = {
      queryId: name,
      queryName: name,
      queryNamespace: namespace,
      sessionId: name,
      evaluationName: name,
      evaluationNamespace: namespace,
      evaluationUid: e.metadata.uid ?? '',
      evaluationType: subject.type,
      evaluator,
      ...(subject.query ? { queryRef: subject.query.name } : {}),
    };
    const emit = (reason: string, message: string, extra: Record<string, string>, warning = false) =>
      this.#events?.enqueue(`${namespace}/${name}`, {
        timestamp: new Date().toISOString(),
        eventType: warning ? 'Warning' : 'Normal',
        reason,
        message,
        data: { ...extra, ...data },
      });
    const root = startRootSpan(this.#tracing.tracer, 'evaluation', {
      [SESSION_ATTRIBUTE]: name,
      'berth.evaluation.name': name,
      'berth.evaluation.namespace': namespace,
      'berth.evaluation.uid': e.metadata.uid ?? '',
      'berth.evaluation.type': subject.type,
      'berth.evaluator': evaluator,
      ...(subject.query ? { 'berth.query.name': subject.query.name } : {}),
    });
    const parent = trace.setSpan(ROOT_CONTEXT, root);
    emit('EvaluationStart', `Evaluation ${name} started`, {
      input: cut(subject.input),
      output: cut(subject.output),
    });
    return {
      attempt: (n) => {
        const span = this.#tracing.tracer.startSpan(
          'evaluator.call',
          { attributes: { 'http.request.method': 'POST', 'url.full': target.url, 'berth.attempt': n } },
          parent,
        );
        return { end: (err) => endAttempt(span, err) };
      },
      end: (outcome, durationMs) => {
        const ms = String(durationMs);
        if (outcome.phase === 'done') {
          const { score, passed } = outcome.result;
          root.setAttributes({ 'berth.evaluation.score': score, 'berth.evaluation.passed': passed });
          root.setStatus({ code: SpanStatusCode.OK });
          const verdict = `${passed ? 'passed' : 'failed'} with score ${score}`;
          emit('EvaluationComplete', `Evaluation ${name} done: ${verdict}`, {
            score: String(score),
            passed: String(passed),
            attempts: String(outcome.attempts),
            durationMs: ms,
          });
        } else if (outcome.phase === 'canceled') {
          root.setStatus({ code: SpanStatusCode.ERROR, message: outcome.message });
          emit('EvaluationCanceled', `Evaluation ${name} canceled`, { durationMs: ms }, true);
        } else {
          root.setStatus({ code: SpanStatusCode.ERROR, message: outcome.message });
          emit('EvaluationError', outcome.message, { durationMs: ms }, true);
        }
        root.end();
        // The last event goes out now, not after the queue's linger (like a query's).
        this.#events?.sendNow(`${namespace}/${name}`);
      },
    };
  }

  /** Waits until queued events and spans were handed to the broker. */
  async flush(): Promise<void> {
    await Promise.all([this.#events?.flush(), this.#tracing.flush()]);
  }

  async close(): Promise<void> {
    await Promise.all([this.#events?.close(), this.#tracing.shutdown()]);
  }
}

function endAttempt(span: Span, err?: AttemptError): void {
  if (err?.status !== undefined) span.setAttribute('http.response.status_code', err.status);
  if (err) span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
  else span.setStatus({ code: SpanStatusCode.OK });
  span.end();
}

/** The HTTP client evaluator calls and event posts share (keep-alive across evaluations). */
/** Evaluator calls, and events to the broker with its token (BROKER_TOKEN_FILE) when there is one. */
export const evaluationHttp = (brokerUrl?: string): HttpClient => {
  const credentials = brokerCredentials([brokerUrl]);
  return createHttpClient({ brokerAuth: (url) => credentials.headersFor(url) });
};
