import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { KubeConfig } from '@kubernetes/client-node';
import type { MiddlewareHandler } from 'hono';
import { berthScheme } from '../api/index.ts';
import { type AuthSetup, apiKeyRoutes, setupAuth } from '../auth/index.ts';
import { Drain, PROBE_PATHS, urlHost } from '../http/index.ts';
import { loadServerTracing } from '../http/otel/index.ts';
import type { InformerCache } from '../kube/cache.ts';
import { createClient } from '../kube/client/index.ts';
import type { Logger } from '../log/index.ts';
import { type ApiEnv, createGatewayApp } from './app.ts';
import { compatRoutes } from './compat/index.ts';
import { createMarketplace, type MarketplaceOptions } from './marketplace/index.ts';
import { mcpRoutes } from './mcp/index.ts';
import { sessionLimits } from './mcp/settings.ts';
import { ApiMetrics } from './metrics.ts';
import { documentCompatRoutes } from './routes/compat-docs.ts';

export interface GatewayServerOptions {
  /** The API service's identity: every API server request is made with it. */
  kc: KubeConfig;
  namespace: string;
  /** Serve `namespace` only, refusing every other (an instance installed for one tenant). */
  confined?: boolean;
  /** The informer cache (SHARED_CACHE): shared with the controller in `berth up`, own in `berth api`. */
  cache: InformerCache;
  brokerUrl?: string;
  logger: Logger;
  port: number;
  host?: string;
  env?: NodeJS.ProcessEnv;
  version?: string;
  bodyLimitBytes?: number;
  compatWaitTimeoutMs?: number;
  bcryptCost?: number;
  /** Marketplace limits and guard settings; MARKETPLACE_ALLOWED_HOSTS comes from `env` unless given. */
  marketplace?: MarketplaceOptions;
}

export interface RunningGateway {
  url: string;
  port: number;
  app: OpenAPIHono<ApiEnv>;
  auth: AuthSetup;
  /**
   * Drains, then stops: readiness turns false and new requests get 503 `shutting_down` (probes and
   * scrapes excepted); requests and chat streams in flight get up to `graceMs` to finish, then each
   * remaining stream ends with a final `shutting_down` error frame. Idempotent.
   */
  close(graceMs?: number): Promise<void>;
}

/** Builds the API service (auth from AUTH_MODE, /v1, /v1/api-keys, /compat/v1, marketplace, /mcp) and serves it. */
export async function startGatewayServer(opts: GatewayServerOptions): Promise<RunningGateway> {
  // The controller of `berth up` shares the cache but not this client: it has its own identity.
  const client = createClient({
    kc: opts.kc,
    scheme: berthScheme(),
    cache: opts.cache,
    userAgent: 'berth-api',
  });
  const auth = await setupAuth({
    kc: opts.kc,
    client,
    cache: opts.cache,
    namespace: opts.namespace,
    logger: opts.logger,
    env: opts.env,
    bcryptCost: opts.bcryptCost,
  });
  const metrics = new ApiMetrics();
  // Routes get the drain's deadline through this signal (the drain is made with the server below).
  const deadline = new AbortController();
  const deps = {
    metrics,
    shutdown: deadline.signal,
    client,
    cache: opts.cache,
    namespace: opts.namespace,
    ...(opts.confined ? { confinedTo: opts.namespace } : {}),
    cluster: opts.kc.getCurrentCluster()?.server,
    brokerUrl: opts.brokerUrl,
    logger: opts.logger,
    version: opts.version ?? '0.1.0',
  };
  const marketplace = createMarketplace(deps, {
    allowedHosts: (opts.env ?? process.env).MARKETPLACE_ALLOWED_HOSTS,
    ...opts.marketplace,
  });
  const tracing = await loadServerTracing({
    serviceName: 'berth-api',
    env: opts.env ?? process.env,
    logger: opts.logger,
  });
  // The drain needs the server, the server the app: the app reaches the drain through these.
  let drain: Drain | undefined;
  let refuse: MiddlewareHandler | undefined;
  const app = createGatewayApp(deps, {
    auth: auth.middleware,
    metrics,
    tracing: tracing?.middleware,
    refuseNew: (c, next) => (refuse ? refuse(c, next) : next()),
    readiness: () =>
      drain?.draining
        ? { ready: false, code: 'shutting_down', message: 'the API service is draining for shutdown' }
        : { ready: true },
    bodyLimitBytes: opts.bodyLimitBytes,
    extensions: [
      (a) => void a.route('/v1/api-keys', apiKeyRoutes(auth.apiKeys, { logger: opts.logger })),
      compatRoutes(deps, { waitTimeoutMs: opts.compatWaitTimeoutMs }),
      documentCompatRoutes,
      (a) => marketplace.mount(a),
      mcpRoutes(deps, {
        waitTimeoutMs: opts.compatWaitTimeoutMs ?? 330_000,
        maxBodyBytes: opts.bodyLimitBytes ?? 10 * 1024 * 1024,
        sessions: sessionLimits(opts.env ?? process.env),
      }),
    ],
  });
  const server = serve({ fetch: app.fetch, port: opts.port, hostname: opts.host ?? '0.0.0.0' }) as Server;
  drain = new Drain(server);
  refuse = drain.refuseNew((path) => PROBE_PATHS.has(path));
  drain.deadline.addEventListener('abort', () => deadline.abort(drain?.deadline.reason));
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { port, address } = server.address() as AddressInfo;
  opts.logger.info({ port, address, namespace: opts.namespace, authMode: auth.mode }, 'api listening');
  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost(opts.host ?? '0.0.0.0')}:${port}`,
    port,
    app,
    auth,
    close: (graceMs = 0) => {
      closing ??= (async () => {
        const d = drain as Drain;
        if (d.inFlight) opts.logger.info({ inFlight: d.inFlight, graceMs }, 'draining requests and streams');
        d.deadline.addEventListener('abort', () =>
          opts.logger.warn({ inFlight: d.inFlight }, 'grace period over: ending what is still in flight'),
        );
        await d.shutdown(graceMs);
        await Promise.all([auth.stop(), marketplace.close(), tracing?.shutdown()]);
      })();
      return closing;
    },
  };
}
