/**
 * The query engine the controller constructs once per process:
 *
 *   const engine = createQueryEngine({ lookup, brokerUrl: process.env.BROKER_URL, logger });
 *   const outcome = await engine.run(query, { signal, onConversation });
 *
 * It owns the shared HTTP client (keep-alive, extra CAs), the model client cache, the event queue and
 * the tracer provider; `close()` drains events and spans and releases connections.
 */
import { type BrokerCredentials, brokerCredentials } from '../http/service-token/index.ts';
import { createLogger, type Logger } from '../log/index.ts';
import type { QueryEngine, QueryOutcome, ResourceLookup, RunContext } from './contract.ts';
import { EventQueue, type EventQueueStats } from './event-queue.ts';
import { createHttpClient } from './http.ts';
import { ModelClients } from './model-client.ts';
import { runQuery } from './run.ts';
import { errorMessage } from './scope.ts';
import { createTracing } from './tracing.ts';
import { boundedText, type UpstreamLimits } from './upstream.ts';

export interface QueryEngineOptions {
  lookup: ResourceLookup;
  /** Broker base URL (BROKER_URL) for chunks, events and traces (spans go elsewhere when OTEL_* says so). */
  brokerUrl?: string;
  /** The token sent to the broker (chunks, events, traces, memory calls to it); default: BROKER_TOKEN_FILE. */
  brokerCredentials?: BrokerCredentials;
  /** Extra trusted CA certificates (PEM) for models, tools and memories, on top of the default store. */
  ca?: string | string[];
  logger?: Logger;
  /** Retries of a model call on 429, 5xx and connection errors (the SDK's backoff). Default 2. */
  maxRetries?: number;
  events?: { capacity?: number; concurrency?: number; maxAttempts?: number; retryBaseMs?: number };
  /** `service.name` of exported spans. */
  serviceName?: string;
  /** Where OTEL_EXPORTER_OTLP_* and ENGINE_MAX_* settings are read from; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Byte caps of what models, tools, memories send back (docs/engine.md, "Limits"); unset: ENGINE_MAX_*, else defaults. */
  limits?: Partial<UpstreamLimits>;
}

export interface EngineStats {
  /** Queries being run right now. */
  running: number;
  events: EventQueueStats;
}

export interface BerthQueryEngine extends QueryEngine {
  stats(): EngineStats;
  /** Waits until queued events and spans have been handed to the broker. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

const NO_EVENTS: EventQueueStats = { queued: 0, inFlight: 0, sent: 0, dropped: 0, failed: 0 };

export function createQueryEngine(opts: QueryEngineOptions): BerthQueryEngine {
  const logger = opts.logger ?? createLogger({ name: 'engine' });
  const brokerUrl = opts.brokerUrl?.replace(/\/+$/, '') || undefined;
  if (!brokerUrl) logger.warn('no broker URL: chunks, events and traces of queries are not recorded');
  const credentials = opts.brokerCredentials ?? brokerCredentials([brokerUrl], opts.env);
  const brokerAuth = (url: URL) => credentials.headersFor(url);
  const http = createHttpClient({ ca: opts.ca, limits: opts.limits, env: opts.env, brokerAuth });
  const tracing = createTracing(brokerUrl, opts.serviceName ?? 'berth-controller', opts.env, brokerAuth);
  if (tracing.target && tracing.target.source !== 'default') {
    const u = new URL(tracing.target.url);
    // The endpoint without its query string or headers: those may carry credentials.
    logger.info(
      { endpoint: `${u.origin}${u.pathname}`, source: tracing.target.source },
      'exporting query spans',
    );
  }
  const events = brokerUrl
    ? new EventQueue({ url: brokerUrl, post: http.postJson, logger, ...opts.events })
    : undefined;
  const deps = {
    lookup: opts.lookup,
    http,
    models: new ModelClients(http, opts.lookup, opts.maxRetries ?? 2),
    tracer: tracing.tracer,
    events,
    brokerUrl,
    logger,
  };
  let running = 0;
  return {
    async run(query, ctx: RunContext): Promise<QueryOutcome> {
      running++;
      try {
        return await runQuery(deps, query, ctx);
      } catch (err) {
        // runQuery turns failures into outcomes; this only guards the contract against a bug.
        logger.error({ err, query: query?.metadata?.name }, 'engine failed unexpectedly');
        return { phase: 'error', message: boundedText(`internal engine error: ${errorMessage(err)}`) };
      } finally {
        running--;
      }
    },
    stats: () => ({ running, events: events?.stats() ?? { ...NO_EVENTS } }),
    async flush() {
      await Promise.all([events?.flush(), tracing.flush()]);
    },
    async close() {
      await Promise.all([events?.close(), tracing.shutdown()]);
      await http.close();
    },
  };
}
