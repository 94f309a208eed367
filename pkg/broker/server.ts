import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Env, MiddlewareHandler } from 'hono';
import { answerProbes, Drain, listenHttp, SseHub, shutdownFrame } from '../http/index.ts';
import { loadServerTracing } from '../http/otel/index.ts';
import { createLogger, type Logger } from '../log/index.ts';
import { createBrokerApp } from './app.ts';
import type { BrokerConfig } from './config.ts';
import type { BrokerDeps } from './deps.ts';
import { brokerReadiness } from './health.ts';
import { BrokerMetrics } from './metrics.ts';
import { openStores } from './stores.ts';
import { otlpDecoder } from './traces/decoder.ts';

export interface RunningBroker {
  url: string;
  port: number;
  app: OpenAPIHono;
  deps: BrokerDeps;
  /**
   * Drains, then stops: readiness turns false and new watches are refused; open SSE streams get up
   * to `graceMs` to finish (a query stream completes, a reader disconnects) while writes are still
   * served; then each remaining stream ends with a `shutting_down` error frame, the server closes and
   * persistence is flushed. Idempotent.
   */
  close(graceMs?: number): Promise<void>;
}

export interface BrokerServerOptions {
  /** Where OTEL_EXPORTER_OTLP_* are read from (own server spans); default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Who may call (auth/middleware.ts); absent: anyone (BROKER_AUTH=none). */
  auth?: MiddlewareHandler<Env>;
}

/** Starts the broker on `config.port` (0 = any free port) and logs `broker listening` with the port. */
export async function startBroker(
  config: BrokerConfig,
  logger?: Logger,
  opts: BrokerServerOptions = {},
): Promise<RunningBroker> {
  const log = logger ?? createLogger({ name: 'broker', level: config.logLevel });
  const hub = new SseHub({ heartbeatMs: config.sse.heartbeatMs, flushMs: config.sse.flushMs });
  let ready = false;
  let opened: Awaited<ReturnType<typeof openStores>>;
  try {
    opened = await openStores(config, hub, log);
  } catch (err) {
    hub.stop();
    throw err;
  }
  // OTLP ingest is not traced: exporting to ourselves would trace our own exports, forever.
  const tracing = await loadServerTracing({
    serviceName: 'berth-broker',
    env: opts.env ?? process.env,
    logger: log,
    skip: (path) => path === '/v1/traces',
  });
  const metrics = new BrokerMetrics(hub, opened.stores);
  let drain: Drain | undefined;
  const deps: BrokerDeps = {
    config,
    logger: log,
    hub,
    stores: opened.stores,
    idempotency: opened.idempotency,
    ready: () => ready,
    draining: () => drain?.draining ?? false,
    health: () => opened.health(),
    metrics,
    tracing: tracing?.middleware,
    otlpDecoder: otlpDecoder(config.otlpDecodeThread, log),
    auth: opts.auth,
  };
  const app = createBrokerApp(deps);
  const sweeper = setInterval(() => {
    try {
      opened.sweep();
    } catch (err) {
      metrics.upkeepFailed();
      log.error({ err }, 'store upkeep failed');
    }
  }, config.sweepMs);
  sweeper.unref();

  // Drain counts requests from the first one: it is attached before any I/O callback can run.
  // Probes on the socket: an idle broker that only answers the kubelet never loads the app's
  // Node adapter and fetch classes (pkg/http/listen).
  const probes = answerProbes({ readiness: () => brokerReadiness(deps), logger: log });
  const { server, port, url } = await listenHttp(app.fetch, { port: config.port, host: config.host, probes });
  drain = new Drain(server);
  ready = true;
  log.info(
    { port, host: config.host, url, backends: config.backends, persistDir: config.persistDir ?? null },
    'broker listening',
  );

  let closing: Promise<void> | undefined;
  const close = (graceMs = 0) => {
    closing ??= (async () => {
      const streams = hub.stats().subscribers;
      if (streams) log.info({ streams, graceMs }, 'draining SSE streams');
      const d = drain as Drain;
      d.deadline.addEventListener('abort', () => {
        const left = hub.stats().subscribers;
        if (left) log.warn({ streams: left }, 'grace period over: ending the SSE streams still open');
        hub.endAll(shutdownFrame('the broker is shutting down; reconnect with Last-Event-ID to resume'));
      });
      await d.shutdown(graceMs);
      ready = false;
      clearInterval(sweeper);
      hub.stop();
      await Promise.all([opened.close(), tracing?.shutdown(), deps.otlpDecoder?.close()]);
      log.info({ port }, 'broker stopped');
    })();
    return closing;
  };
  return { url, port, app, deps, close };
}
