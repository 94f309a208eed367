/**
 * What a process sends to brokers besides chunks, per broker: operation events (one EventQueue per
 * broker) and spans (one tracer provider per broker, exporting to its `/v1/traces` with its
 * credential). When OTEL_EXPORTER_OTLP_* names a collector, every span goes there instead, through
 * one provider. Made lazily: a broker nothing was routed to costs nothing.
 */
import type { Tracer } from '@opentelemetry/api';
import { otlpTracesTarget } from '../http/otel/index.ts';
import type { Logger } from '../log/index.ts';
import type { BrokerRoute } from './brokers.ts';
import { EventQueue, type EventQueueOptions, type EventQueueStats } from './event-queue.ts';
import type { HttpClient } from './http.ts';
import { createTracing, type Tracing } from './tracing.ts';

export interface BrokerSinksOptions {
  http: Pick<HttpClient, 'postJson'>;
  logger: Logger;
  serviceName: string;
  env?: NodeJS.ProcessEnv;
  events?: Omit<EventQueueOptions, 'url' | 'post' | 'logger'>;
  /** Used instead of exporting spans (tests). */
  tracing?: Tracing;
}

const NO_EVENTS: EventQueueStats = { queued: 0, inFlight: 0, sent: 0, dropped: 0, failed: 0 };

/**
 * A queue or tracer per broker AND namespace it belongs to: a tenant may point its broker Service at
 * another tenant's broker, and must then not be sent through the queue (and credential) of that one.
 */
const keyOf = (route: BrokerRoute) => `${route.namespace ?? ''}\n${route.url}`;

export class BrokerSinks {
  readonly #opts: BrokerSinksOptions;
  readonly #events = new Map<string, EventQueue>();
  readonly #tracings = new Map<string, Tracing>();
  /** The collector's provider (OTEL_EXPORTER_OTLP_*), or spans made and dropped without a broker. */
  readonly #shared: Tracing;
  /** Spans go to each route's broker: no collector configured, tracing not turned off. */
  readonly #perBroker: boolean;
  readonly #env: NodeJS.ProcessEnv;

  constructor(opts: BrokerSinksOptions) {
    this.#opts = opts;
    this.#env = opts.env ?? process.env;
    this.#shared = opts.tracing ?? createTracing(undefined, opts.serviceName, this.#env);
    const enabled = otlpTracesTarget(this.#env, 'http://broker/v1/traces') !== undefined;
    this.#perBroker = !opts.tracing && enabled && this.#shared.target === undefined;
  }

  /** Where spans go when a collector is configured (for the start-up log line); undefined: the brokers. */
  get collector(): Tracing['target'] {
    return this.#shared.target;
  }

  /** The event queue of `route`'s broker; undefined without a broker. */
  events(route: BrokerRoute | undefined): EventQueue | undefined {
    if (!route) return undefined;
    let q = this.#events.get(keyOf(route));
    if (!q) {
      const { http, logger } = this.#opts;
      q = new EventQueue({
        ...this.#opts.events,
        url: route.url,
        // The credential is read per request: a rotated token is picked up by a long-lived queue.
        post: (url, body) => http.postJson(url, body, route.headers()),
        logger,
      });
      this.#events.set(keyOf(route), q);
    }
    return q;
  }

  /** The tracer whose spans reach `route`'s broker (or the collector, when one is configured). */
  tracer(route: BrokerRoute | undefined): Tracer {
    if (!this.#perBroker || !route) return this.#shared.tracer;
    let t = this.#tracings.get(keyOf(route));
    if (!t) {
      const traces = `${route.url}/v1/traces`;
      // Only this broker's own traces URL gets its credential (createTracerProvider asks per export).
      t = createTracing(route.url, this.#opts.serviceName, this.#env, (url) =>
        url.href === traces ? route.headers() : {},
      );
      this.#tracings.set(keyOf(route), t);
    }
    return t.tracer;
  }

  stats(): EventQueueStats {
    const sum = { ...NO_EVENTS };
    for (const q of this.#events.values()) {
      const s = q.stats();
      for (const k of Object.keys(sum) as Array<keyof EventQueueStats>) sum[k] += s[k];
    }
    return sum;
  }

  async flush(): Promise<void> {
    await Promise.all([
      ...[...this.#events.values()].map((q) => q.flush()),
      ...[...this.#tracings.values(), this.#shared].map((t) => t.flush()),
    ]);
  }

  async close(): Promise<void> {
    await Promise.all([
      ...[...this.#events.values()].map((q) => q.close()),
      ...[...this.#tracings.values(), this.#shared].map((t) => t.shutdown()),
    ]);
  }
}
