import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import type { QueryEngine, ResourceLookup } from '../engine/contract.ts';
import { createSharedCache, type InformerCache } from '../kube/cache.ts';
import { Controller } from '../kube/controller.ts';
import { EventRecorder } from '../kube/events.ts';
import { LeaderElector } from '../kube/leader.ts';
import type { SupervisorOptions } from '../kube/supervisor.ts';
import { createLogger, type Logger } from '../log/index.ts';
import { CacheLookup } from './lookup.ts';
import { MarketplaceSeeder, type SeedSource } from './marketplace/seeder.ts';
import { MemoryReconciler } from './memory.ts';
import { ControllerMetrics } from './metrics.ts';
import { QueryReconciler, type QueryReconcilerOptions } from './query/reconciler.ts';
import { type RunningServer, startMetrics, startProbes } from './servers.ts';

export interface LeaderElectionConfig {
  /** Namespace of the Lease; default the controller's namespace, else `default`. */
  namespace?: string;
  name?: string;
  identity?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
}

export interface StartControllerOptions {
  kc: KubeConfig;
  /** Watch only this namespace; all namespaces when absent. */
  namespace?: string;
  /** The query engine, or a factory given the cache-backed ResourceLookup. None: pending queries wait. */
  engine?: QueryEngine | ((lookup: ResourceLookup) => QueryEngine);
  brokerUrl?: string;
  /** A shared cache (e.g. `berth up` shares one with the API service); created and owned otherwise. */
  cache?: InformerCache;
  informers?: SupervisorOptions & { pageSize?: number };
  /** false: reconcile at once without a Lease (one process only, e.g. `berth up`). */
  leaderElection?: LeaderElectionConfig | false;
  query?: QueryReconcilerOptions;
  workers?: { query?: number; memory?: number };
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
  metrics: ControllerMetrics;
  isLeader(): boolean;
  probesPort?: number;
  metricsPort?: number;
  stop(): Promise<void>;
}

const keyOf = (o: KubernetesObject) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

/**
 * Starts the controller in this process: shared informer caches, the Query, Memory and marketplace
 * seeding controllers (workers run only while this process leads), probes and metrics.
 */
export async function startController(opts: StartControllerOptions): Promise<RunningController> {
  const logger = opts.logger ?? createLogger({ name: 'controller' });
  const cache =
    opts.cache ??
    createSharedCache({
      kc: opts.kc,
      namespace: opts.namespace,
      supervisor: { logger, ...opts.informers },
      pageSize: opts.informers?.pageSize,
      logger,
    });
  const ownsCache = !opts.cache;
  const lookup = new CacheLookup(cache);
  const engine = typeof opts.engine === 'function' ? opts.engine(lookup) : opts.engine;
  const identity =
    (opts.leaderElection ? opts.leaderElection.identity : undefined) ||
    `${process.env.HOSTNAME || hostname()}_${randomBytes(4).toString('hex')}`;
  const recorder = new EventRecorder(opts.kc, 'berth-controller', identity, logger);

  const controllers: Controller[] = [];
  let elector: LeaderElector | undefined;
  const queries: QueryReconciler = new QueryReconciler(
    {
      kc: opts.kc,
      cache,
      lookup,
      engine,
      brokerUrl: opts.brokerUrl,
      recorder,
      logger: logger.child({ controller: 'query' }),
      enqueue: (key) => queryCtl.enqueue(key),
      onPurged: (s, complete) => metrics.purged(s, complete),
    },
    opts.query,
  );
  const metrics = new ControllerMetrics({
    cache,
    controllers: () => controllers,
    isLeader: () => (elector ? elector.isLeader : leading),
    runningQueries: () => queries.runs.size,
  });
  const common = { metrics, logger };
  const queryCtl = new Controller({
    ...common,
    name: 'query',
    workers: opts.workers?.query ?? 8,
    reconcile: (key, signal) => queries.reconcile(key, signal),
  });
  const memories = new MemoryReconciler(opts.kc, cache, logger.child({ controller: 'memory' }));
  const memoryCtl = new Controller({
    ...common,
    name: 'memory',
    workers: opts.workers?.memory ?? 2,
    reconcile: (key, signal) => memories.reconcile(key, signal),
  });
  controllers.push(queryCtl, memoryCtl);
  const seeder = opts.marketplaceSeed
    ? new MarketplaceSeeder(
        opts.kc,
        opts.marketplaceSeed,
        logger.child({ controller: 'marketplace-seed' }),
        opts.informers,
      )
    : undefined;
  const seedCtl = seeder
    ? new Controller({ ...common, name: 'marketplace-seed', workers: 1, reconcile: () => seeder.reconcile() })
    : undefined;
  if (seedCtl) controllers.push(seedCtl);

  const enqueueQuery = (o: KubernetesObject) => queryCtl.enqueue(keyOf(o));
  cache.onChange('queries', {
    onAdd: enqueueQuery,
    onUpdate: (_, o) => enqueueQuery(o),
    onDelete: enqueueQuery,
  });
  const enqueueMemory = (o: KubernetesObject) => memoryCtl.enqueue(keyOf(o));
  cache.onChange('memories', { onAdd: enqueueMemory, onUpdate: (_, o) => enqueueMemory(o) });
  for (const plural of ['services', 'secrets'] as const) {
    const fan = (o: KubernetesObject) => {
      for (const k of memories.keysFor(plural, o)) memoryCtl.enqueue(k);
    };
    cache.onChange(plural, { onAdd: fan, onUpdate: (_, o) => fan(o), onDelete: fan });
  }
  seeder?.watch(() => seedCtl?.enqueue('seed'));

  let leading = false;
  const startWork = () => {
    leading = true;
    for (const c of controllers) c.start();
    // Level-based: a new term reconciles everything, whatever happened while another process led.
    for (const o of cache.listAll('queries')) queryCtl.enqueue(keyOf(o));
    for (const o of cache.listAll('memories')) memoryCtl.enqueue(keyOf(o));
    seedCtl?.enqueue('seed');
  };
  const stopWork = () => {
    leading = false;
    const aborted = queries.stopRuns();
    if (aborted) logger.warn({ aborted }, 'stopped reconciling: query runs aborted');
    return Promise.all(controllers.map((c) => c.stop()));
  };

  const syncStart = performance.now();
  cache.start();
  await Promise.all([cache.waitForSync(opts.syncTimeoutMs ?? 60_000), seeder?.waitForSync()]);
  logger.info(
    {
      informers: cache.health().map((h) => `${h.name}:${h.objects}`),
      syncMs: Math.round(performance.now() - syncStart),
    },
    'caches synced',
  );

  const servers: RunningServer[] = [];
  const result: RunningController = {
    caches: cache,
    lookup,
    queries,
    metrics,
    isLeader: () => (elector ? elector.isLeader : leading),
    stop: async () => {
      await stopWork();
      await elector?.stop(); // releases the lease so a standby takes over at once
      await Promise.all(servers.map((s) => s.close()));
      await seeder?.stop();
      if (ownsCache) await cache.stop();
      logger.info('controller stopped');
    },
  };
  try {
    if (opts.probes !== false) {
      const p = opts.probes ?? { port: 8081 };
      const probes = await startProbes(
        {
          informers: () => cache.health(),
          ready: () => cache.synced,
          leader: () => ({
            isLeader: result.isLeader(),
            ...(elector?.leader ? { leader: elector.leader } : {}),
          }),
        },
        p.port,
        p.host,
      );
      servers.push(probes);
      result.probesPort = probes.port;
    }
    if (opts.metrics !== false) {
      const m = opts.metrics ?? { port: 8443 };
      const server = await startMetrics(metrics.registry, m.port, m, m.host);
      servers.push(server);
      result.metricsPort = server.port;
    }
  } catch (err) {
    await result.stop();
    throw err;
  }

  if (opts.leaderElection === false) startWork();
  else {
    const le = opts.leaderElection ?? {};
    elector = new LeaderElector({
      kc: opts.kc,
      namespace: le.namespace ?? opts.namespace ?? 'default',
      name: le.name ?? 'berth-controller',
      identity,
      leaseDurationMs: le.leaseDurationMs,
      renewDeadlineMs: le.renewDeadlineMs,
      retryPeriodMs: le.retryPeriodMs,
      logger,
      onStartedLeading: startWork,
      onStoppedLeading: () => void stopWork(),
      onNewLeader: (id) => logger.info({ leader: id, self: id === identity }, 'leader observed'),
    });
    elector.start();
  }
  logger.info(
    { identity, namespace: opts.namespace ?? '(all)', engine: !!engine, broker: opts.brokerUrl ?? null },
    'controller started',
  );
  return result;
}
