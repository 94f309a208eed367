import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { KubeConfig } from '@kubernetes/client-node';
import { berthScheme } from '../api/index.ts';
import { type AuthSetup, apiKeyRoutes, setupAuth } from '../auth/index.ts';
import type { InformerCache } from '../kube/cache.ts';
import { createClient } from '../kube/client/index.ts';
import type { Logger } from '../log/index.ts';
import { createGatewayApp } from './app.ts';
import { compatRoutes } from './compat/index.ts';
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
}

export interface RunningGateway {
  url: string;
  port: number;
  app: OpenAPIHono;
  auth: AuthSetup;
  close(): Promise<void>;
}

/** Builds the API service (auth from AUTH_MODE, /v1, /v1/api-keys, /compat/v1) and serves it. */
export async function startGatewayServer(opts: GatewayServerOptions): Promise<RunningGateway> {
  // The controller of `berth up` shares the cache but not this client: it has its own identity.
  const client = createClient({ kc: opts.kc, scheme: berthScheme(), cache: opts.cache });
  const auth = await setupAuth({
    kc: opts.kc,
    client,
    cache: opts.cache,
    namespace: opts.namespace,
    logger: opts.logger,
    env: opts.env,
    bcryptCost: opts.bcryptCost,
  });
  const deps = {
    client,
    cache: opts.cache,
    namespace: opts.namespace,
    ...(opts.confined ? { confinedTo: opts.namespace } : {}),
    cluster: opts.kc.getCurrentCluster()?.server,
    brokerUrl: opts.brokerUrl,
    logger: opts.logger,
    version: opts.version ?? '0.1.0',
  };
  const app = createGatewayApp(deps, {
    auth: auth.middleware,
    bodyLimitBytes: opts.bodyLimitBytes,
    extensions: [
      (a) => void a.route('/v1/api-keys', apiKeyRoutes(auth.apiKeys, { logger: opts.logger })),
      compatRoutes(deps, { waitTimeoutMs: opts.compatWaitTimeoutMs }),
      documentCompatRoutes,
    ],
  });
  const server = serve({ fetch: app.fetch, port: opts.port, hostname: opts.host ?? '0.0.0.0' });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  opts.logger.info({ port, namespace: opts.namespace, authMode: auth.mode }, 'api listening');
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    app,
    auth,
    close: () => {
      closing ??= (async () => {
        await new Promise<void>((r) => {
          server.close(() => r());
          (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
        });
        await auth.stop();
      })();
      return closing;
    },
  };
}
