import type { KubeConfig } from '@kubernetes/client-node';
import { berthScheme, Kinds, SHARED_CACHE } from '../api/index.ts';
import { type BrokerRouter, singleBrokerRouter } from '../engine/brokers.ts';
import type { QueryEngine, ResourceLookup } from '../engine/contract.ts';
import type { BerthQueryEngine } from '../engine/engine.ts';
import { createHttpClient } from '../engine/http.ts';
import { brokerCredentials } from '../http/service-token/index.ts';
import type { InformerCache } from '../kube/cache.ts';
import type { Client } from '../kube/client/index.ts';
import { Controller } from '../kube/controller.ts';
import { EventRecorder } from '../kube/events.ts';
import { CoreKinds } from '../kube/kinds.ts';
import { type LeaderElectionConfig as LeaseConfig, Manager } from '../kube/manager.ts';
import type { SupervisorOptions } from '../kube/supervisor.ts';
import { createLogger, type Logger } from '../log/index.ts';
import { NamespaceBrokers, NamespaceTokens, type ServiceAccountRef } from './brokers/index.ts';
import { EvaluationReconciler, type EvaluationReconcilerOptions } from './evaluation/reconciler.ts';
import { EvaluationTelemetry, evaluationHttp } from './evaluation/telemetry.ts';
import { EvaluatorReconciler } from './evaluator.ts';
import { CacheLookup } from './lookup.ts';
import { addSeeder, type SeedSource } from './marketplace/seeder.ts';
import { McpServerReconciler, type McpServerReconcilerOptions } from './mcpserver/reconciler.ts';
import { MemoryReconciler } from './memory.ts';
import { ControllerMetrics } from './metrics.ts';
import { waitingQueries } from './query/dependencies.ts';
import { QueryReconciler, type QueryReconcilerOptions } from './query/reconciler.ts';
import { ServerRunnable, startMetrics, startProbes } from './servers.ts';

export type LeaderElectionConfig = Partial<LeaseConfig>;

export interface StartControllerOptions {
  kc: KubeConfig;
  /** Watch only this namespace; all namespaces when absent. */
  namespace?: string;
  /**
   * The query engine, or a factory given the cache-backed ResourceLookup and the broker router
   * (each namespace's broker). None: pending queries wait.
   */
  engine?: QueryEngine | ((lookup: ResourceLookup, brokers: BrokerRouter) => QueryEngine);
  /** The configured broker (BROKER_URL): every namespace without a broker of its own writes there. */
  brokerUrl?: string;
  /** The namespace `brokerUrl` is the own broker of (the others' keys are qualified); none: every key bare. */
  brokerNamespace?: string;
  /**
   * A namespace with a `berth-broker` Service (`serviceName`) gets its data there; `account`: the
   * controller's own service account, to mint each such broker its token. false: `brokerUrl` only.
   */
  namespaceBrokers?: { serviceName?: string; account?: ServiceAccountRef } | false;
  /** A shared cache (e.g. `berth up` shares one with the API service); created and owned otherwise. */
  cache?: InformerCache;
  informers?: SupervisorOptions & { pageSize?: number };
  /** false: reconcile at once without a Lease (one process only, e.g. `berth up`). */
  leaderElection?: LeaderElectionConfig | false;
  query?: QueryReconcilerOptions;
  /** Evaluations call their evaluators; false: this process leaves them alone. */
  evaluation?: EvaluationReconcilerOptions | false;
  /** MCPServers get their tools listed (docs/mcp.md); false: this process leaves them alone. */
  mcpServers?: McpServerReconcilerOptions | false;
  workers?: { query?: number; memory?: number; evaluator?: number; evaluation?: number; mcpserver?: number };
  marketplaceSeed?: SeedSource;
  probes?: { port: number; host?: string } | false;
  metrics?: { port: number; host?: string; certFile?: string; keyFile?: string } | false;
  logger?: Logger;
  syncTimeoutMs?: number;
}

export interface RunningController {
  caches: InformerCache;
  lookup: ResourceLookup;
  queries: QueryReconciler;
  evaluations?: EvaluationReconciler;
  metrics: ControllerMetrics;
  isLeader(): boolean;
  /** What `/readyz` answers: caches synced and not stopping. */
  ready(): boolean;
  probesPort?: number;
  metricsPort?: number;
  stop(): Promise<void>;
}

function newManager(opts: StartControllerOptions, logger: Logger): Manager {
  const le = opts.leaderElection;
  return new Manager({
    kc: opts.kc,
    scheme: berthScheme(),
    namespace: opts.namespace,
    resources: SHARED_CACHE,
    cache: opts.cache,
    informers: opts.informers,
    leaderElection: le === false ? false : { ...le, name: le?.name ?? 'berth-controller' },
    userAgent: 'berth-controller',
    logger,
    syncTimeoutMs: opts.syncTimeoutMs,
  });
}

/**
 * The Evaluation controller: runs evaluator calls (a Runnable stopped before the controller, so calls
 * abort first), re-enqueued when a call ends and when a referenced Query or Evaluator changes.
 */
function addEvaluations(
  mgr: Manager,
  opts: StartControllerOptions,
  common: { logger: Logger; metrics: ControllerMetrics; brokers: BrokerRouter },
) {
  const { cache, client } = mgr;
  const http = evaluationHttp();
  const telemetry = new EvaluationTelemetry({ brokers: common.brokers, http, logger: common.logger });
  const deps = {
    client,
    fetch: http.fetch,
    telemetry,
    watchNamespace: opts.namespace,
    logger: common.logger,
  };
  const reconciler = new EvaluationReconciler(deps, opts.evaluation || {});
  const workers = opts.workers?.evaluation ?? 4;
  mgr.add(
    common.metrics.track(
      new Controller({ ...common, name: 'evaluation', workers, reconciler })
        .for(cache, Kinds.Evaluation)
        .watches(cache, Kinds.Query, (o) => reconciler.requestsFor('Query', o))
        .watches(cache, Kinds.Evaluator, (o) => reconciler.requestsFor('Evaluator', o))
        .source(reconciler.runEnded),
    ),
  );
  mgr.add(reconciler);
  return {
    reconciler,
    close: async () => {
      await telemetry.close();
      await http.close();
    },
  };
}

/**
 * The MCPServer controller: lists each server's tools off the workers (a Runnable stopped before the
 * controller, so listings abort first), again when its Service or header Secret changes.
 */
function addMcpServers(
  mgr: Manager,
  opts: StartControllerOptions,
  common: { logger: Logger; metrics: ControllerMetrics },
) {
  const { cache, client } = mgr;
  const http = createHttpClient();
  const reconciler = new McpServerReconciler(
    { client, http, watchNamespace: opts.namespace, logger: common.logger },
    opts.mcpServers || {},
  );
  const workers = opts.workers?.mcpserver ?? 2;
  mgr.add(
    common.metrics.track(
      new Controller({ ...common, name: 'mcpserver', workers, reconciler })
        .for(cache, Kinds.MCPServer)
        .watches(cache, CoreKinds.Service, (o) => reconciler.requestsFor('Service', o))
        .watches(cache, CoreKinds.Secret, (o) => reconciler.requestsFor('Secret', o))
        .source(reconciler.runEnded),
    ),
  );
  mgr.add(reconciler);
  return { reconciler, close: () => http.close() };
}

/**
 * Starts the controller in this process: the Manager (shared informer cache, client, lease), the
 * Query, Memory, Evaluator, Evaluation, MCPServer and marketplace seeding controllers (run only while this process leads), probes
 * and metrics. Runnables start in the order registered here and stop in reverse.
 */
export async function startController(opts: StartControllerOptions): Promise<RunningController> {
  const logger = opts.logger ?? createLogger({ name: 'controller' });
  const mgr = newManager(opts, logger);
  const { cache, client } = mgr;
  const lookup = new CacheLookup(cache);
  const brokers = brokerRouter(opts, client, logger);
  const engine = typeof opts.engine === 'function' ? opts.engine(lookup, brokers) : opts.engine;
  const metrics = new ControllerMetrics({ cache, isLeader: () => mgr.isLeader() });
  const common = { logger, metrics };

  const recorder = new EventRecorder(client, 'berth-controller', mgr.identity, logger);
  const onPurged = (s: number, complete: boolean) => metrics.purged(s, complete);
  const deps = { client, engine, brokers, recorder, logger, onPurged };
  const queries = new QueryReconciler(deps, opts.query);
  metrics.countRunningQueries(() => queries.runs.size);
  if (engine && hasStats(engine)) metrics.countEngineEvents(() => engine.stats().events);
  const queryWorkers = opts.workers?.query ?? 8;
  mgr.add(
    metrics.track(
      new Controller({ ...common, name: 'query', workers: queryWorkers, reconciler: queries })
        .for(cache, Kinds.Query)
        // A Query waiting for its Memory or an MCPServer to be resolved runs once it is (query/dependencies.ts).
        .watches(cache, Kinds.Memory, (o) => waitingQueries(cache, 'Memory', o))
        .watches(cache, Kinds.MCPServer, (o) => waitingQueries(cache, 'MCPServer', o))
        .source(queries.runEnded),
    ),
  );
  mgr.add(queries); // stopped before the query controller: runs abort first

  const memories = new MemoryReconciler(client, opts.namespace);
  mgr.add(
    metrics.track(
      new Controller({ ...common, name: 'memory', workers: opts.workers?.memory ?? 2, reconciler: memories })
        .for(cache, Kinds.Memory)
        .watches(cache, CoreKinds.Service, (o) => memories.requestsFor('Service', o))
        .watches(cache, CoreKinds.Secret, (o) => memories.requestsFor('Secret', o)),
    ),
  );
  // Evaluators are checked to answer (evaluator.ts) through a client of their own, closed at stop.
  const evaluatorHttp = evaluationHttp();
  const evaluators = new EvaluatorReconciler({
    client,
    fetch: evaluatorHttp.fetch,
    watchNamespace: opts.namespace,
  });
  mgr.add(
    metrics.track(
      new Controller({
        ...common,
        name: 'evaluator',
        workers: opts.workers?.evaluator ?? 2,
        reconciler: evaluators,
      })
        .for(cache, Kinds.Evaluator)
        .watches(cache, CoreKinds.Service, (o) => evaluators.requestsFor('Service', o))
        .watches(cache, CoreKinds.Secret, (o) => evaluators.requestsFor('Secret', o)),
    ),
  );
  const evaluations =
    opts.evaluation === false ? undefined : addEvaluations(mgr, opts, { ...common, brokers });
  const mcpServers = opts.mcpServers === false ? undefined : addMcpServers(mgr, opts, common);
  if (opts.marketplaceSeed) metrics.track(addSeeder(mgr, opts.marketplaceSeed, common));

  // Unready from the first moment of a stop, while runs are aborted and the lease released (the
  // probes server itself stops last), like the API service and the broker while they drain.
  let stopping = false;
  const health = {
    informers: () => cache.health(),
    ready: () => cache.synced && !stopping,
    leader: () => ({ isLeader: mgr.isLeader(), ...(mgr.leader() ? { leader: mgr.leader() } : {}) }),
  };
  const p = opts.probes === false ? undefined : (opts.probes ?? { port: 8081 });
  const probes = p && mgr.add(new ServerRunnable('probes', () => startProbes(health, p.port, p.host)));
  const m = opts.metrics === false ? undefined : (opts.metrics ?? { port: 8443 });
  const metricsServer =
    m && mgr.add(new ServerRunnable('metrics', () => startMetrics(metrics.registry, m.port, m, m.host)));

  await mgr.start();
  logger.info(
    {
      identity: mgr.identity,
      namespace: opts.namespace ?? '(all)',
      engine: !!engine,
      broker: opts.brokerUrl ?? null,
    },
    'controller started',
  );
  return {
    caches: cache,
    lookup,
    queries,
    evaluations: evaluations?.reconciler,
    metrics,
    isLeader: () => mgr.isLeader(),
    ready: health.ready,
    probesPort: probes?.port,
    metricsPort: metricsServer?.port,
    stop: async () => {
      stopping = true;
      await mgr.stop();
      await evaluations?.close(); // events and spans of the calls aborted above are flushed here
      await evaluatorHttp.close();
      await mcpServers?.close();
      logger.info('controller stopped');
    },
  };
}

/** Each namespace's broker (its `berth-broker` Service), else the configured one. */
function brokerRouter(opts: StartControllerOptions, client: Client, logger: Logger): BrokerRouter {
  const url = opts.brokerUrl?.replace(/\/+$/, '') || undefined;
  const namespace = opts.brokerNamespace;
  const credentials = brokerCredentials([url]);
  const nb = opts.namespaceBrokers;
  if (nb === false) return singleBrokerRouter(url, namespace, credentials);
  return new NamespaceBrokers({
    reader: client,
    fallback: url ? { url, namespace } : undefined,
    credentials,
    tokens: nb?.account ? new NamespaceTokens({ client, account: nb.account }) : undefined,
    serviceName: nb?.serviceName,
    watchNamespace: opts.namespace,
    logger: logger.child({ component: 'brokers' }),
  });
}

/** The Berth engine counts its event delivery; a stub engine (tests) need not. */
function hasStats(e: QueryEngine): e is QueryEngine & Pick<BerthQueryEngine, 'stats'> {
  return typeof (e as Partial<BerthQueryEngine>).stats === 'function';
}
