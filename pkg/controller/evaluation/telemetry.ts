/**
 * What an evaluation records in the broker, like a query: operation events
 * (`EvaluationStart`/`Complete`/`Error`/`Canceled`, keyed by the evaluation's name so
 * `GET /events/{name}` returns them) through the engine's EventQueue, and one trace per evaluation
 * (root span `evaluation`, a child `evaluator.call` per attempt) exported over OTLP.
 */

import { ROOT_CONTEXT, type Span, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Evaluation } from '../../api/index.ts';
import { BrokerSinks } from '../../engine/broker-sinks.ts';
import { type BrokerRouter, singleBrokerRouter } from '../../engine/brokers.ts';
import { createHttpClient, type HttpClient } from '../../engine/http.ts';
import { cut } from '../../engine/scope.ts';
import { SESSION_ATTRIBUTE, startRootSpan, type Tracing } from '../../engine/tracing.ts';
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

export interface EvaluationTelemetryOptions {
  /** The broker of each namespace (the engine's router); without it, every namespace to `brokerUrl`. */
  brokers?: BrokerRouter;
  brokerUrl?: string;
  http: HttpClient;
  logger: Logger;
  /** Instead of exporting spans to the brokers (tests). */
  tracing?: Tracing;
}

export class EvaluationTelemetry {
  readonly #brokers: BrokerRouter;
  readonly #sinks: BrokerSinks;
  readonly #logger: Logger;

  constructor(opts: EvaluationTelemetryOptions) {
    const brokerUrl = opts.brokerUrl?.replace(/\/+$/, '') || undefined;
    const env = process.env;
    const home = env.BROKER_NAMESPACE || env.POD_NAMESPACE || undefined;
    this.#brokers = opts.brokers ?? singleBrokerRouter(brokerUrl, home, brokerCredentials([brokerUrl]));
    this.#sinks = new BrokerSinks({
      http: opts.http,
      logger: opts.logger,
      serviceName: 'berth-controller',
      tracing: opts.tracing,
    });
    this.#logger = opts.logger;
  }

  /** Starts an evaluation's trace, in its namespace's broker, and sends EvaluationStart. */
  async begin(e: Evaluation, subject: Subject, target: EvaluatorTarget): Promise<EvaluationTrace> {
    const name = e.metadata.name;
    const namespace = e.metadata.namespace ?? 'default';
    const evaluator = e.spec.evaluator.name;
    const route = await this.#brokers.route(namespace).catch((err: Error) => {
      this.#logger.warn({ namespace, error: err.message }, 'no broker for the evaluation: not recorded');
      return undefined;
    });
    const events = this.#sinks.events(route);
    const tracer = this.#sinks.tracer(route);
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
      events?.enqueue(`${namespace}/${name}`, {
        timestamp: new Date().toISOString(),
        eventType: warning ? 'Warning' : 'Normal',
        reason,
        message,
        data: { ...extra, ...data },
      });
    const root = startRootSpan(tracer, 'evaluation', {
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
        const span = tracer.startSpan(
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
        events?.sendNow(`${namespace}/${name}`);
      },
    };
  }

  /** Waits until queued events and spans were handed to the broker. */
  async flush(): Promise<void> {
    await this.#sinks.flush();
  }

  async close(): Promise<void> {
    await this.#sinks.close();
  }
}

function endAttempt(span: Span, err?: AttemptError): void {
  if (err?.status !== undefined) span.setAttribute('http.response.status_code', err.status);
  if (err) span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
  else span.setStatus({ code: SpanStatusCode.OK });
  span.end();
}

/**
 * The HTTP client evaluator calls and event posts share (keep-alive across evaluations); broker
 * credentials come with each route, never from the client.
 */
export const evaluationHttp = (): HttpClient => createHttpClient();
