import { resolve } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { berthScheme, SHARED_CACHE } from '../pkg/api/index.ts';
import { loadBrokerConfig } from '../pkg/broker/config.ts';
import { startBroker } from '../pkg/broker/server.ts';
import { startController } from '../pkg/controller/index.ts';
import { CacheLookup } from '../pkg/controller/lookup.ts';
import { startDashboardServer } from '../pkg/dashboard/server.ts';
import { type DashboardSettings, loadDashboardSettings, SettingsError } from '../pkg/dashboard/settings.ts';
import { startDemoMcpServer } from '../pkg/demo-mcp/server.ts';
import { createQueryEngine } from '../pkg/engine/index.ts';
import { BUILTIN_EVALUATOR_PORT, startBuiltinEvaluatorFor } from '../pkg/evaluator/server.ts';
import { startGatewayServer } from '../pkg/gateway/server.ts';
import { isLoopbackHost, LOOPBACK_HOST, shutdownGraceSeconds } from '../pkg/http/index.ts';
import { InformerCache } from '../pkg/kube/cache.ts';
import { createClient, ignoreNotFound } from '../pkg/kube/client/index.ts';
import { applyCrds } from '../pkg/kube/controlplane/bootstrap.ts';
import { projectRoot, startControlPlane } from '../pkg/kube/controlplane/index.ts';
import { KubeError } from '../pkg/kube/errors.ts';
import { CoreKinds } from '../pkg/kube/kinds.ts';
import { createLogger, type Logger } from '../pkg/log/index.ts';
import { settleAfterStart } from './settle.ts';
import { catchStopSignals, Started } from './signals.ts';
import { seedLocalObjects } from './up-seed.ts';

export interface UpOptions {
  stateDir: string;
  apiPort: number;
  brokerPort: number;
  dashboardPort: number;
  /** The demo MCP server's port (loopback only); `demoMcp: false` starts none. */
  demoMcpPort?: number;
  demoMcp?: boolean;
  /** The built-in evaluator's port (loopback only); `evaluator: false` starts none. */
  evaluatorPort?: number;
  evaluator?: boolean;
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
 * in memory. A stop signal is caught from the start: during start-up it stops what is up so far.
 */
export async function runUp(opts: UpOptions): Promise<void> {
  const signals = catchStopSignals(); // before the slow start-up: see cmd/signals.ts
  const log = createLogger({ name: 'berth-up' });
  const NAMESPACE = opts.namespace ?? 'default';
  // Local means local: nothing listens beyond this machine unless --host says so.
  const host = opts.host ?? LOOPBACK_HOST;
  const uiSettings = dashboardSettings(log);
  // Chat streams and broker watchers in flight get this long to finish (docs/observability.md).
  const graceMs = shutdownGraceSeconds(process.env) * 1000;
  // Stopped the last started first: dashboard, API (drained), controller, cache, broker (drained),
  // control plane (the second signal's exit leaves etcd and kube-apiserver to their guards).
  const started = new Started(log);
  signals.stopWith(
    log,
    async () => {
      await started.stop();
      log.info('stopped');
    },
    { graceMs },
  );
  const cluster = await started.step(clusterFor(opts, log), 'cluster', (c) => c.stop());
  const broker = await started.step(
    startBroker(
      { ...loadBrokerConfig(process.env), port: opts.brokerPort, host },
      log.child({ component: 'broker' }),
    ),
    'broker',
    (b) => b.close(graceMs),
  );
  // The demo MCP server: the sample MCPServer points at it (manifests/samples/mcpserver.yaml). An
  // extra, not a part: a port already taken (another `berth up`) is a warning, not a failed start.
  const demoMcp =
    opts.demoMcp === false
      ? undefined
      : await started.step(
          startDemoMcpServer({
            port: opts.demoMcpPort ?? 8090,
            logger: log.child({ component: 'demo-mcp' }),
          }).catch((err: NodeJS.ErrnoException) => {
            if (err.code !== 'EADDRINUSE') throw err;
            log.warn(
              {
                port: opts.demoMcpPort ?? 8090,
                fix: '--demo-mcp-port <port> (0: any free port) or --no-demo-mcp',
              },
              'demo MCP server not started: its port is taken',
            );
            return undefined;
          }),
          'demo MCP server',
          async (d) => d?.close(),
        );
  // Conversation memory from the local broker and the demo model, out of the box.
  await started.step(seedLocalObjects(cluster.admin, NAMESPACE, broker.url, log));

  const cache = await started.step(
    InformerCache.of(
      { kc: cluster.controller, namespace: opts.namespace, logger: log.child({ component: 'cache' }) },
      SHARED_CACHE,
    ),
    'cache',
    (c) => c.stop(),
  );
  // The built-in evaluator (docs/evaluations.md): the sample Evaluator points at it. Before the
  // controller, whose reachability check makes an Evaluator ready; a taken port is a warning.
  const evaluatorPort = opts.evaluatorPort ?? BUILTIN_EVALUATOR_PORT;
  const evaluator =
    opts.evaluator === false
      ? undefined
      : await started.step(
          startBuiltinEvaluatorFor({
            port: evaluatorPort,
            logger: log.child({ component: 'evaluator' }),
            lookup: new CacheLookup(cache),
            namespace: NAMESPACE,
          }).catch((err: NodeJS.ErrnoException) => {
            if (err.code !== 'EADDRINUSE') throw err;
            log.warn(
              { port: evaluatorPort, fix: '--evaluator-port <port> (0: any free port) or --no-evaluator' },
              'built-in evaluator not started: its port is taken',
            );
            return undefined;
          }),
          'built-in evaluator',
          async (e) => e?.close(),
        );
  await started.step(
    startController({
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
    }),
    'controller',
    (c) => c.stop(),
  );
  const api = await started.step(
    startGatewayServer({
      kc: cluster.gateway,
      namespace: NAMESPACE,
      // `--namespace` confines everything to it; by default the API serves what its identity may.
      confined: opts.namespace !== undefined,
      cache,
      brokerUrl: broker.url,
      logger: log.child({ component: 'api' }),
      port: opts.apiPort,
      host,
    }),
    'api',
    (a) => a.close(graceMs),
  );
  const dashboard = await started.step(
    startDashboardServer({
      settings: { ...uiSettings, apiServiceUrl: api.url },
      logger: log.child({ component: 'dashboard' }),
      port: opts.dashboardPort,
      host,
    }),
    'dashboard',
    (d) => d.close(),
  );
  await started.step(warnIfExposed(log, host, api.auth.mode));
  console.log(
    `  API service:     ${api.url}  (docs: ${api.url}/docs, chat: ${api.url}/compat/v1, MCP: ${api.url}/mcp)\n  broker:          ${broker.url}  (docs: ${broker.url}/api-docs)\n  dashboard:       ${dashboard.url}/  (AUTH_MODE ${uiSettings.mode})\n${demoMcp ? `  demo MCP server: ${demoMcp.url}\n` : ''}${evaluator ? `  evaluator:       ${evaluator.url}  (built-in: exact, contains, regex, llm)\n` : ''}`,
  );
  settleAfterStart(log);
  log.info(
    {
      api: api.url,
      broker: broker.url,
      dashboard: dashboard.url,
      demoMcp: demoMcp?.url,
      evaluator: evaluator?.url,
    },
    'ready',
  );
}
