import type { Env, MiddlewareHandler } from 'hono';
import {
  type BrokerAuthConfig,
  brokerAuth,
  lazyTokenReviewer,
  loadBrokerAuthConfig,
} from '../pkg/broker/auth/index.ts';
import { ConfigError, loadBrokerConfig } from '../pkg/broker/config.ts';
import { startBroker } from '../pkg/broker/server.ts';
import { optimiseHotPathsSooner, shutdownGraceSeconds } from '../pkg/http/index.ts';
import type { Logger } from '../pkg/log/index.ts';
import { createLogger } from '../pkg/log/index.ts';
import { settleAfterStart } from './settle.ts';
import { catchStopSignals } from './signals.ts';

/**
 * `berth broker`: configuration from the environment (`--port` wins over PORT), then serve until
 * SIGINT/SIGTERM, which drain SSE streams for up to SHUTDOWN_GRACE_SECONDS, end the rest with an
 * error frame and flush persistence before exiting.
 */
export async function runBroker(opts: { port?: number }): Promise<void> {
  const signals = catchStopSignals(); // before anything listens: see cmd/signals.ts
  optimiseHotPathsSooner(); // before the server's code first runs (pkg/http/tiering)
  let config: ReturnType<typeof loadBrokerConfig>;
  let graceMs: number;
  let authConfig: BrokerAuthConfig;
  try {
    config = loadBrokerConfig(process.env);
    authConfig = loadBrokerAuthConfig(process.env);
    graceMs = shutdownGraceSeconds(process.env) * 1000;
  } catch (err) {
    if (err instanceof ConfigError || err instanceof RangeError) {
      console.error(`berth broker: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  if (opts.port !== undefined) config.port = opts.port;
  const logger = createLogger({ name: 'broker', level: config.logLevel });
  let broker: Awaited<ReturnType<typeof startBroker>>;
  try {
    broker = await startBroker(config, logger, { auth: await authMiddleware(authConfig, logger) });
  } catch (err) {
    // A backend that cannot be opened (PostgreSQL unreachable, schema not migrated): one clear
    // line, no stack; the orchestrator restarts us.
    logger.error(
      { err: { message: err instanceof Error ? err.message : String(err) } },
      'broker failed to start',
    );
    console.error(`berth broker: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
  settleAfterStart(logger);
  signals.stopWith(logger, () => broker.close(graceMs), { graceMs });
}

/**
 * BROKER_AUTH=serviceaccount: the TokenReview client with the pod's own service account, or KUBECONFIG
 * outside a cluster. A broker without auth loads no Kubernetes client, and one with auth loads it (and
 * reads the kubeconfig) at the first request that needs a review: the client costs ~46 MB of RSS that
 * an idle tenant broker does not use (docs/broker.md, "Footprint"). Until it loads, or if it fails
 * to, a request needing a review is answered 503 as when the API server is unreachable.
 */
async function authMiddleware(
  cfg: BrokerAuthConfig,
  logger: Logger,
): Promise<MiddlewareHandler<Env> | undefined> {
  if (cfg.mode === 'none') {
    logger.info(
      'BROKER_AUTH=none: every caller is served (local runs only; every manifest sets serviceaccount)',
    );
    return undefined;
  }
  const reviewer = lazyTokenReviewer(async () => {
    const { defaultKubeTokenReviewer } = await import('./broker-token-review.ts');
    const loaded = defaultKubeTokenReviewer();
    logger.info('TokenReview client loaded');
    return loaded;
  });
  logger.info(
    { namespace: cfg.namespace, writers: cfg.writers },
    'BROKER_AUTH=serviceaccount: callers need a berth-broker token',
  );
  return brokerAuth({ config: cfg, reviewer, logger });
}
