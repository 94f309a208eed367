import { resolve } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { berthScheme, SHARED_CACHE } from '../pkg/api/index.ts';
import { loadBrokerConfig } from '../pkg/broker/config.ts';
import { startBroker } from '../pkg/broker/server.ts';
import { startController } from '../pkg/controller/index.ts';
import { startDashboardServer } from '../pkg/dashboard/server.ts';
import { type DashboardSettings, loadDashboardSettings, SettingsError } from '../pkg/dashboard/settings.ts';
import { createQueryEngine } from '../pkg/engine/index.ts';
import { startGatewayServer } from '../pkg/gateway/server.ts';
import { isLoopbackHost, LOOPBACK_HOST, shutdownGraceSeconds } from '../pkg/http/index.ts';
import { InformerCache } from '../pkg/kube/cache.ts';
import { createClient, ignoreNotFound } from '../pkg/kube/client/index.ts';
import { applyCrds } from '../pkg/kube/controlplane/bootstrap.ts';
import { projectRoot, startControlPlane } from '../pkg/kube/controlplane/index.ts';
import { KubeError } from '../pkg/kube/errors.ts';
import { CoreKinds } from '../pkg/kube/kinds.ts';
import { createLogger, type Logger } from '../pkg/log/index.ts';
import { seedLocalObjects } from './up-seed.ts';

export interface UpOptions {
  stateDir: string;
  apiPort: number;
  brokerPort: number;
  dashboardPort: number;
  /** Where the API, broker and dashboard listen (default 127.0.0.1: this machine only). */
  host?: string;
  /** Serve and watch only this namespace; default: serve `default`, watch all. */
  namespace?: string;
}

const clientOf = (kc: KubeConfig) => createClient({ kc, scheme: berthScheme(), userAgent: 'berth-up' });

/**
 * A cluster the user already points KUBECONFIG at, if it answers and knows the credentials: a
 * refusal (403) is an answer too, since the user may not read namespaces.
 */
async function reachableCluster(): Promise<KubeConfig | undefined> {
  if (!process.env.KUBECONFIG) return undefined;
  const kc = new KubeConfig();
  try {
    kc.loadFromDefault();
    await ignoreNotFound(clientOf(kc).get(CoreKinds.Namespace, { name: 'default' }));
    return kc;
  } catch (err) {
    return err instanceof KubeError && err.reason === 'Forbidden' ? kc : undefined;
  }
}

async function clusterFor(opts: UpOptions, log: Logger) {
  const crdDir = resolve(projectRoot(), 'crds');
  const existing = await reachableCluster();
  if (existing) {
    await applyCrds(clientOf(existing), crdDir);
    log.info(
      { server: existing.getCurrentCluster()?.server, kubeconfig: process.env.KUBECONFIG },
      'reusing the cluster KUBECONFIG points at',
    );
    return { admin: existing, controller: existing, gateway: existing, stop: async () => {} };
  }
  log.info('starting local control plane (the first run builds kube-apiserver and etcd: 10-20 minutes)');
  const cp = await startControlPlane({ stateDir: resolve(opts.stateDir), crdDir, log: (m) => log.info(m) });
  log.info({ server: cp.server, kubeconfig: cp.kubeconfigPath, startMs: cp.startMs }, 'control plane up');
  console.log(
    `\n  Kubernetes API:  ${cp.server}\n  kubeconfig:      ${cp.kubeconfigPath}\n  try:             kubectl --kubeconfig ${cp.kubeconfigPath} get queries\n`,
  );
  const as = (context: string) => {
    const kc = new KubeConfig();
    kc.loadFromFile(cp.kubeconfigPath);
    kc.setCurrentContext(context);
    return kc;
  };
  return {
    admin: as('berth-local'),
    controller: as('berth-local-controller'),
    gateway: as('berth-local-gateway'),
    stop: cp.stop,
  };
}

/**
 * The dashboard's settings from the environment (AUTH_MODE shared with the API), checked before
 * anything starts; its API is always the local one.
 */
function dashboardSettings(log: Logger): DashboardSettings {
  try {
    return loadDashboardSettings({ ...process.env, API_SERVICE_URL: undefined }, log);
  } catch (err) {
    if (!(err instanceof SettingsError)) throw err;
    console.error(`berth up: dashboard: ${err.message}`);
    process.exit(2);
  }
}

/**
 * A structured warning when `--host` puts the servers beyond this machine while the API takes
 * every request without credentials (AUTH_MODE open): anyone who reaches the address can create
 * and delete resources, mint API keys and read every query's messages. The broker of `berth up`
 * checks no token in any mode, which the warning says too.
 */
async function warnIfExposed(log: Logger, host: string, authMode: string): Promise<void> {
  if (await isLoopbackHost(host)) return;
  if (authMode === 'open')
    log.warn(
      {
        host,
        authMode,
        exposed: ['api', 'broker', 'dashboard'],
        fix: '--host 127.0.0.1 or AUTH_MODE=basic|sso|hybrid',
      },
      'listening beyond loopback with AUTH_MODE=open: anyone who can reach this machine can use the API, the broker and the dashboard without credentials',
    );
  else
    log.warn(
      { host, authMode, exposed: ['broker'] },
      'listening beyond loopback: the broker of berth up checks no credentials',
    );
}

/**
 * `berth up`: a control plane (or the cluster KUBECONFIG points at), then broker, controller (with
 * the engine), API service and dashboard in ONE process sharing ONE informer cache. Broker storage
 * in memory.
 */
export async function runUp(opts: UpOptions): Promise<void> {
  const log = createLogger({ name: 'berth-up' });
  const NAMESPACE = opts.namespace ?? 'default';
  // Local means local: nothing listens beyond this machine unless --host says so.
  const host = opts.host ?? LOOPBACK_HOST;
  const uiSettings = dashboardSettings(log);
  const cluster = await clusterFor(opts, log);
  const broker = await startBroker(
    { ...loadBrokerConfig(process.env), port: opts.brokerPort, host },
    log.child({ component: 'broker' }),
  );
  // Conversation memory from the local broker and the demo model, out of the box.
  await seedLocalObjects(cluster.admin, NAMESPACE, broker.url, log);

  const cache = InformerCache.of(
    { kc: cluster.controller, namespace: opts.namespace, logger: log.child({ component: 'cache' }) },
    SHARED_CACHE,
  );
  const controller = await startController({
    kc: cluster.controller,
    namespace: opts.namespace,
    cache,
    brokerUrl: broker.url,
    engine: (lookup, brokers) =>
      createQueryEngine({ lookup, brokers, logger: log.child({ component: 'engine' }) }),
    leaderElection: false,
    probes: false,
    metrics: false,
    logger: log.child({ component: 'controller' }),
  });
  const api = await startGatewayServer({
    kc: cluster.gateway,
    namespace: NAMESPACE,
    // `--namespace` confines everything to it; by default the API serves what its identity may.
    confined: opts.namespace !== undefined,
    cache,
    brokerUrl: broker.url,
    logger: log.child({ component: 'api' }),
    port: opts.apiPort,
    host,
  });
  const dashboard = await startDashboardServer({
    settings: { ...uiSettings, apiServiceUrl: api.url },
    logger: log.child({ component: 'dashboard' }),
    port: opts.dashboardPort,
    host,
  });
  await warnIfExposed(log, host, api.auth.mode);
  console.log(
    `  API service:     ${api.url}  (docs: ${api.url}/docs, chat: ${api.url}/compat/v1)\n  broker:          ${broker.url}  (docs: ${broker.url}/api-docs)\n  dashboard:       ${dashboard.url}/  (AUTH_MODE ${uiSettings.mode})\n`,
  );

  let stopping = false;
  // Chat streams and broker watchers in flight get this long to finish (docs/observability.md).
  const graceMs = shutdownGraceSeconds(process.env) * 1000;
  const shutdown = async (signal: string) => {
    // A second signal means "now" (the control plane's guards stop etcd and kube-apiserver with us).
    if (stopping) process.exit(1);
    stopping = true;
    log.info({ signal, graceMs }, 'stopping');
    await dashboard.close().catch((err) => log.error({ err }, 'dashboard stop failed'));
    await api.close(graceMs).catch((err) => log.error({ err }, 'api stop failed'));
    await controller.stop().catch((err) => log.error({ err }, 'controller stop failed'));
    await cache.stop().catch((err) => log.error({ err }, 'cache stop failed'));
    await broker.close(graceMs).catch((err) => log.error({ err }, 'broker stop failed'));
    await cluster.stop();
    log.info('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  log.info({ api: api.url, broker: broker.url, dashboard: dashboard.url }, 'ready');
}
