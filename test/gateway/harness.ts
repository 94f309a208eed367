import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { KubeConfig } from '@kubernetes/client-node';
import { createGatewayApp, type GatewayOptions } from '../../pkg/gateway/app.ts';
import type { ObjectCache } from '../../pkg/gateway/cache.ts';
import { KubeWriter } from '../../pkg/gateway/kube-writer.ts';
import { createLogger } from '../../pkg/log/index.ts';

export interface RunningGateway {
  url: string;
  app: OpenAPIHono;
  close(): Promise<void>;
}

/** Serves the API service on a free port, as `berth api` does, with the given cache. */
export async function startGateway(
  opts: { kc: KubeConfig; namespace: string; cache: ObjectCache; brokerUrl?: string } & GatewayOptions,
): Promise<RunningGateway> {
  const app = createGatewayApp(
    {
      kc: opts.kc,
      namespace: opts.namespace,
      cache: opts.cache,
      writer: new KubeWriter(opts.kc),
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
