/**
 * The query engine the controller constructs once per process:
 *
 *   const engine = createQueryEngine({ lookup, brokerUrl: process.env.BROKER_URL, logger });
 *   const engine = createQueryEngine({ lookup, brokers, logger }); // a broker per namespace
 *   const outcome = await engine.run(query, { signal, onConversation });
 *
 * It owns the shared HTTP client (keep-alive, extra CAs), the model client cache, and the event queues
 * and tracer providers of the brokers it writes to; `close()` drains events and spans and releases
 * connections.
 */
import { type BrokerCredentials, brokerCredentials } from '../http/service-token/index.ts';
import { createLogger, type Logger } from '../log/index.ts';
import { BrokerSinks } from './broker-sinks.ts';
import { type BrokerRouter, singleBrokerRouter } from './brokers.ts';
import type { QueryEngine, QueryOutcome, ResourceLookup, RunContext } from './contract.ts';
import type { EventQueueStats } from './event-queue.ts';
import { createHttpClient } from './http.ts';
import { McpClient } from './mcp/index.ts';
import { ModelClients } from './model-client.ts';
import { unresolvedDependency } from './readiness.ts';
import { runQuery } from './run.ts';
import { errorMessage } from './scope.ts';
import { boundedText, type UpstreamLimits } from './upstream.ts';

export interface QueryEngineOptions {
  lookup: ResourceLookup;
  /**
   * Which broker each namespace's chunks, events and traces go to (spans go elsewhere when OTEL_*
   * says so), with its credential. Default: every namespace to `brokerUrl`.
   */
  brokers?: BrokerRouter;
  /** Broker base URL (BROKER_URL) when there is no `brokers` router. */
  brokerUrl?: string;
  /** The namespace `brokerUrl` is the own broker of (keys of others are qualified); default BROKER_NAMESPACE, else POD_NAMESPACE, else none (every key bare). */
  brokerNamespace?: string;
  /** The token sent to `brokerUrl`; default: BROKER_TOKEN_FILE. */
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

/** The one-broker router of a process given BROKER_URL only. */
function defaultRouter(opts: QueryEngineOptions, env: NodeJS.ProcessEnv): BrokerRouter {
  const brokerUrl = opts.brokerUrl?.replace(/\/+$/, '') || undefined;
  const namespace = opts.brokerNamespace ?? (env.BROKER_NAMESPACE || env.POD_NAMESPACE || undefined);
  const credentials = opts.brokerCredentials ?? brokerCredentials([brokerUrl], env);
  return singleBrokerRouter(brokerUrl, namespace, credentials);
}

export function createQueryEngine(opts: QueryEngineOptions): BerthQueryEngine {
  const logger = opts.logger ?? createLogger({ name: 'engine' });
  const env = opts.env ?? process.env;
  if (!opts.brokers && !opts.brokerUrl)
    logger.warn('no broker URL: chunks, events and traces of queries are not recorded');
  const brokers = opts.brokers ?? defaultRouter(opts, env);
  const http = createHttpClient({ ca: opts.ca, limits: opts.limits, env: opts.env });
  const sinks = new BrokerSinks({
    http,
    logger,
    serviceName: opts.serviceName ?? 'berth-controller',
    env,
    events: opts.events,
  });
  if (sinks.collector) {
    const u = new URL(sinks.collector.url);
    // The endpoint without its query string or headers: those may carry credentials.
    logger.info(
      { endpoint: `${u.origin}${u.pathname}`, source: sinks.collector.source },
      'exporting query spans',
    );
  }
  const mcp = new McpClient(http);
  const deps = {
    lookup: opts.lookup,
    http,
    models: new ModelClients(http, opts.lookup, opts.maxRetries ?? 2),
    mcp,
    brokers,
    sinks,
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
        const message = boundedText(`internal engine error: ${errorMessage(err)}`);
        return { phase: 'error', reason: 'Failed', message };
      } finally {
        running--;
      }
    },
    waitsFor: (query) => unresolvedDependency(opts.lookup, query),
    stats: () => ({ running, events: sinks.stats() }),
    flush: () => sinks.flush(),
    async close() {
      await sinks.close();
      await mcp.close(); // kept 2025-11-25 sessions end with a DELETE
      await http.close();
    },
  };
}
