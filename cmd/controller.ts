import { KubeConfig } from '@kubernetes/client-node';
import { startController } from '../pkg/controller/index.ts';
import { createQueryEngine, parseDuration } from '../pkg/engine/index.ts';
import { createLogger } from '../pkg/log/index.ts';
import type { ControllerCliOptions } from './controller-options.ts';
import { settleAfterStart } from './settle.ts';
import { catchStopSignals } from './signals.ts';

function ms(value: string, flag: string): number {
  try {
    return parseDuration(value);
  } catch (err) {
    throw new Error(`${flag}: ${(err as Error).message}`);
  }
}

function seedConfigMap(spec: string | undefined) {
  if (!spec) return undefined;
  const m = /^([^/]+)\/([^:]+)(?::(.+))?$/.exec(spec);
  if (!m) throw new Error(`--marketplace-seed-configmap: expected <namespace>/<name>[:<key>], got ${spec}`);
  return { namespace: m[1] as string, name: m[2] as string, ...(m[3] ? { key: m[3] } : {}) };
}

/** The service account tenant brokers' tokens are minted for: `<namespace>/<name>`, or the pod's own. */
function tokenAccount(opts: ControllerCliOptions) {
  const env = process.env;
  const spec =
    opts.brokerTokenAccount ||
    (env.POD_NAMESPACE && env.POD_SERVICE_ACCOUNT ? `${env.POD_NAMESPACE}/${env.POD_SERVICE_ACCOUNT}` : '');
  if (!spec) return undefined;
  const m = /^([a-z0-9-]+)\/([a-z0-9.-]+)$/.exec(spec);
  if (!m) throw new Error(`--broker-token-account: expected <namespace>/<name>, got ${spec}`);
  return { namespace: m[1] as string, name: m[2] as string };
}

export async function runController(opts: ControllerCliOptions): Promise<void> {
  const signals = catchStopSignals(); // before anything listens: see cmd/signals.ts
  const logger = createLogger({ name: 'controller' });
  const kc = new KubeConfig();
  kc.loadFromDefault(); // KUBECONFIG, else ~/.kube/config, else in-cluster
  const home = process.env.POD_NAMESPACE || opts.namespace || 'default';
  const watchNamespace = opts.namespace || process.env.WATCH_NAMESPACE || undefined;
  let engine: ReturnType<typeof createQueryEngine> | undefined;
  const seedCm = seedConfigMap(opts.marketplaceSeedConfigmap);
  const running = await startController({
    kc,
    namespace: watchNamespace,
    brokerUrl: opts.brokerUrl,
    brokerNamespace: opts.brokerNamespace || process.env.POD_NAMESPACE || undefined,
    namespaceBrokers: opts.tenantBrokers
      ? { serviceName: opts.tenantBrokerService, account: tokenAccount(opts) }
      : false,
    engine: opts.engine
      ? (lookup, brokers) => {
          engine = createQueryEngine({
            lookup,
            brokers,
            logger: logger.child({ component: 'engine' }),
          });
          return engine;
        }
      : undefined,
    informers: {
      watchdogMs: ms(opts.informerWatchdog, '--informer-watchdog'),
      resyncMs: ms(opts.informerResync, '--informer-resync'),
    },
    leaderElection: opts.leaderElect
      ? {
          namespace: opts.leaseNamespace || home,
          name: opts.leaseName,
          leaseDurationMs: ms(opts.leaseDuration, '--lease-duration'),
          renewDeadlineMs: ms(opts.renewDeadline, '--renew-deadline'),
          retryPeriodMs: ms(opts.retryPeriod, '--retry-period'),
        }
      : false,
    query: {
      purgeGraceMs: ms(opts.purgeGrace, '--purge-grace'),
      purgeRetryMaxMs: ms(opts.purgeRetryMax, '--purge-retry-max'),
    },
    marketplaceSeed:
      opts.marketplaceSeedFile || seedCm
        ? { file: opts.marketplaceSeedFile, configMap: seedCm, defaultNamespace: home }
        : undefined,
    probes: { port: opts.port },
    metrics: { port: opts.metricsPort, certFile: opts.metricsCertFile, keyFile: opts.metricsKeyFile },
    logger,
  });
  settleAfterStart(logger);
  logger.info({ probesPort: running.probesPort, metricsPort: running.metricsPort }, 'ready');

  signals.stopWith(logger, async () => {
    await running.stop();
    await engine?.close();
  });
}
