import { KubeConfig } from '@kubernetes/client-node';
import { SHARED_CACHE } from '../pkg/api/index.ts';
import { ConfigError, gatewayEnvSchema, parseEnv, resolveNamespace } from '../pkg/gateway/config.ts';
import { startGatewayServer } from '../pkg/gateway/server.ts';
import { otlpTracesTarget } from '../pkg/http/otel/index.ts';
import { InformerCache } from '../pkg/kube/cache.ts';
import { createLogger } from '../pkg/log/index.ts';
import { settleAfterStart } from './settle.ts';
import { catchStopSignals } from './signals.ts';

export interface ApiCliOptions {
  port: number;
  namespace?: string;
}

/**
 * `berth api`: the API service for one namespace, with its own informer cache of that namespace
 * (KUBECONFIG, else in-cluster config). Serves until SIGINT/SIGTERM, then drains for up to
 * SHUTDOWN_GRACE_SECONDS (requests and chat streams in flight finish; new ones get 503).
 */
export async function runApi(opts: ApiCliOptions): Promise<void> {
  const signals = catchStopSignals(); // before anything listens: see cmd/signals.ts
  let env: ReturnType<typeof parseEnv<typeof gatewayEnvSchema>>;
  try {
    env = parseEnv(gatewayEnvSchema, process.env);
    otlpTracesTarget(process.env); // an invalid OTEL_EXPORTER_OTLP_* URL stops us here, named
  } catch (err) {
    if (err instanceof ConfigError || err instanceof RangeError) {
      console.error(`berth api: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger({ name: 'api', level: env.LOG_LEVEL });
  const kc = new KubeConfig();
  kc.loadFromDefault();
  // Given a namespace (the tenant overlay sets NAMESPACE), the instance serves and watches only it;
  // without one it serves what its identity may access, watching every namespace.
  const explicit = opts.namespace ?? env.NAMESPACE;
  const namespace = resolveNamespace(explicit, kc.getContextObject(kc.getCurrentContext())?.namespace);
  const cache = InformerCache.of({ kc, namespace: explicit ? namespace : undefined, logger }, SHARED_CACHE);
  cache.start();
  await cache.waitForSync(60_000);
  const gateway = await startGatewayServer({
    kc,
    namespace,
    confined: !!explicit,
    cache,
    brokerUrl: env.BROKER_URL,
    logger,
    port: opts.port,
    bodyLimitBytes: env.BODY_LIMIT_BYTES,
    compatWaitTimeoutMs: env.COMPAT_WAIT_TIMEOUT_SECONDS * 1000,
  });
  settleAfterStart(logger);
  const graceMs = env.SHUTDOWN_GRACE_SECONDS * 1000;
  signals.stopWith(
    logger,
    async () => {
      await gateway.close(graceMs);
      await cache.stop(); // it serves the requests that are draining: it stops after them
    },
    { graceMs },
  );
}
