/**
 * `berth up`-style wiring for /compat/v1 tests, in this process on the test control plane: the
 * real broker, Memory "default" pointing at it, ONE shared informer cache, the controller with the
 * real engine, and API services (several may share the cache, e.g. one per AUTH_MODE or one without
 * a broker). Targets of every type run against a fake model over real HTTPS and a fake HTTP tool.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { vi } from 'vitest';
import { API_VERSION, berthScheme, Kinds, SHARED_CACHE } from '../../pkg/api/index.ts';
import { loadBrokerConfig } from '../../pkg/broker/config.ts';
import { type RunningBroker, startBroker } from '../../pkg/broker/server.ts';
import { type RunningController, startController } from '../../pkg/controller/index.ts';
import { createQueryEngine } from '../../pkg/engine/index.ts';
import { type RunningGateway, startGatewayServer } from '../../pkg/gateway/server.ts';
import { applyObject } from '../../pkg/kube/apply.ts';
import { InformerCache } from '../../pkg/kube/cache.ts';
import { createClient } from '../../pkg/kube/client/index.ts';
import { createLogger, type Logger } from '../../pkg/log/index.ts';
import { type FakeModelServer, startFakeModel } from '../fixtures/fake-model.ts';
import { type FakeToolServer, startFakeTool } from '../fixtures/fake-tool.ts';
import { createNamespace, kubeConfig } from '../support/kube.ts';

export interface ApiOptions {
  env?: NodeJS.ProcessEnv;
  /** false: an API service without a broker URL (single-chunk streams). */
  broker?: boolean;
  waitTimeoutMs?: number;
}

export interface Platform {
  ns: string;
  fake: FakeModelServer;
  tools: FakeToolServer;
  broker: RunningBroker;
  cache: InformerCache;
  controller: RunningController;
  /** The default API service (open mode, with the broker). */
  api: RunningGateway;
  logger: Logger;
  /** Another API service on the same cache and controller. */
  startApi(opts: ApiOptions): Promise<RunningGateway>;
  apply(obj: KubernetesObject): Promise<void>;
  stop(): Promise<void>;
}

const obj = (kind: string, name: string, ns: string, spec: Record<string, unknown>): KubernetesObject =>
  ({ apiVersion: API_VERSION, kind, metadata: { name, namespace: ns }, spec }) as KubernetesObject;

/** Targets every compat test file can use; fake-model scripts are keyed by the Model's spec.model. */
function targets(ns: string, fakeUrl: string, toolUrl: string): KubernetesObject[] {
  const model = (name: string, providerModel = name) =>
    obj('Model', name, ns, { type: 'openai', model: providerModel, baseUrl: fakeUrl });
  return [
    model('default', 'fake-default'),
    model('usage-model'),
    model('slow-model'),
    model('broken-model'),
    model('stream-model'),
    model('writer'),
    model('critic'),
    obj('Agent', 'helper', ns, { prompt: 'You are helpful.' }),
    obj('Agent', 'writer', ns, { prompt: 'You write.', modelRef: { name: 'writer' } }),
    obj('Agent', 'critic', ns, { prompt: 'You criticise.', modelRef: { name: 'critic' } }),
    obj('Agent', 'slow', ns, { prompt: 'You are slow.', modelRef: { name: 'slow-model' } }),
    obj('Agent', 'broken', ns, { prompt: 'You fail.', modelRef: { name: 'broken-model' } }),
    obj('Agent', 'streamer', ns, { prompt: 'You stream.', modelRef: { name: 'stream-model' } }),
    obj('Team', 'duo', ns, {
      members: [
        { type: 'agent', name: 'writer' },
        { type: 'agent', name: 'critic' },
      ],
      strategy: 'sequential',
    }),
    obj('Tool', 'echo', ns, { http: { url: `${toolUrl}/echo`, method: 'POST' } }),
  ];
}

export async function startPlatform(prefix: string, opts: { logger?: Logger } = {}): Promise<Platform> {
  const logger = opts.logger ?? createLogger({ level: process.env.LOG_LEVEL ?? 'warn', name: prefix });
  const admin = createClient({ kc: kubeConfig('admin'), scheme: berthScheme() });
  const [ns, fake, tools] = await Promise.all([createNamespace(prefix), startFakeModel(), startFakeTool()]);
  const broker = await startBroker(
    { ...loadBrokerConfig({}), port: 0, host: '127.0.0.1' },
    logger.child({ component: 'broker' }),
  );
  const apply = async (o: KubernetesObject) =>
    void (await applyObject(admin, o, { fieldManager: 'compat-test', force: true }));
  await apply(obj('Memory', 'default', ns, { address: { value: broker.url } }));
  for (const o of targets(ns, fake.url, tools.url)) await apply(o);

  const kc = kubeConfig('controller');
  const cache = InformerCache.of(
    { kc, namespace: ns, logger: logger.child({ component: 'cache' }) },
    SHARED_CACHE,
  );
  const controller = await startController({
    kc,
    namespace: ns,
    cache,
    brokerUrl: broker.url,
    engine: (lookup) =>
      createQueryEngine({
        lookup,
        brokerUrl: broker.url,
        ca: fake.ca,
        // Model errors surface at once: the SDK's own retries are the engine's concern, tested there.
        maxRetries: 0,
        logger: logger.child({ component: 'engine' }),
      }),
    leaderElection: false,
    probes: false,
    metrics: false,
    logger: logger.child({ component: 'controller' }),
  });
  // Queries need the resolved Memory; wait for the controller to resolve it (watch-driven).
  await cache.waitFor(Kinds.Memory, ns, 'default', (m) => !!m?.status?.lastResolvedAddress, {
    timeoutMs: 20_000,
  });
  await vi.waitFor(() => {
    if ((cache.list(Kinds.Tool, ns) ?? []).length < 1 || (cache.list(Kinds.Team, ns) ?? []).length < 1)
      throw new Error('targets not cached yet');
  });

  const apis: RunningGateway[] = [];
  const startApi = async (opts: ApiOptions) => {
    const api = await startGatewayServer({
      kc: kubeConfig('gateway'),
      namespace: ns,
      cache,
      brokerUrl: opts.broker === false ? undefined : broker.url,
      logger: logger.child({ component: 'api' }),
      port: 0,
      host: '127.0.0.1',
      env: { AUTH_MODE: 'open', ...opts.env },
      compatWaitTimeoutMs: opts.waitTimeoutMs,
      bcryptCost: 4,
    });
    apis.push(api);
    return api;
  };
  const api = await startApi({});
  return {
    ns,
    fake,
    tools,
    broker,
    cache,
    controller,
    api,
    logger,
    startApi,
    apply,
    stop: async () => {
      await Promise.all(apis.map((a) => a.close()));
      await controller.stop();
      await cache.stop();
      await broker.close();
      await Promise.all([fake.close(), tools.close()]);
    },
  };
}
