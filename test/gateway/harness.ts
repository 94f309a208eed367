import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { KubeConfig } from '@kubernetes/client-node';
import { berthScheme } from '../../pkg/api/index.ts';
import { type ApiEnv, createGatewayApp, type GatewayOptions } from '../../pkg/gateway/app.ts';
import { InformerCache } from '../../pkg/kube/cache.ts';
import { createClient } from '../../pkg/kube/client/index.ts';
import { createLogger } from '../../pkg/log/index.ts';

export interface RunningGateway {
  url: string;
  app: OpenAPIHono<ApiEnv>;
  close(): Promise<void>;
}

/**
 * Serves the API service on a free port, as `berth api` does, with the given cache; without one,
 * an empty cache, so every read goes to the API server.
 */
export async function startGateway(
  opts: { kc: KubeConfig; namespace: string; cache?: InformerCache; brokerUrl?: string } & GatewayOptions,
): Promise<RunningGateway> {
  const cache = opts.cache ?? InformerCache.of({ kc: opts.kc, namespace: opts.namespace }, []);
  const app = createGatewayApp(
    {
      client: createClient({ kc: opts.kc, scheme: berthScheme(), cache }),
      cache,
      namespace: opts.namespace,
      cluster: opts.kc.getCurrentCluster()?.server,
      brokerUrl: opts.brokerUrl,
      logger: createLogger({ level: 'silent' }),
      version: 'test',
    },
    opts,
  );
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    app,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
