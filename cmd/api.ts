import { KubeConfig } from '@kubernetes/client-node';
import { SHARED_CACHE } from '../pkg/api/index.ts';
import { ConfigError, gatewayEnvSchema, parseEnv, resolveNamespace } from '../pkg/gateway/config.ts';
import { startGatewayServer } from '../pkg/gateway/server.ts';
import { InformerCache } from '../pkg/kube/cache.ts';
import { createLogger } from '../pkg/log/index.ts';

export interface ApiCliOptions {
  port: number;
  namespace?: string;
}

/**
 * `berth api`: the API service for one namespace, with its own informer cache of that namespace
 * (KUBECONFIG, else in-cluster config). Serves until SIGINT/SIGTERM.
 */
export async function runApi(opts: ApiCliOptions): Promise<void> {
  let env: ReturnType<typeof parseEnv<typeof gatewayEnvSchema>>;
  try {
    env = parseEnv(gatewayEnvSchema, process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
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
  const stop = (signal: string) => {
    logger.info({ signal }, 'shutting down');
    Promise.all([gateway.close(), cache.stop()]).then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
