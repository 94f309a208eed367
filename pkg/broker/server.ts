import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { SseHub } from '../http/index.ts';
import { createLogger, type Logger } from '../log/index.ts';
import { createBrokerApp } from './app.ts';
import type { BrokerConfig } from './config.ts';
import type { BrokerDeps } from './deps.ts';
import { openStores } from './stores.ts';

export interface RunningBroker {
  url: string;
  port: number;
  app: OpenAPIHono;
  deps: BrokerDeps;
  /** Stops accepting, ends SSE streams, flushes persistence. Idempotent. */
  close(): Promise<void>;
}

/** Starts the broker on `config.port` (0 = any free port) and logs `broker listening` with the port. */
export async function startBroker(config: BrokerConfig, logger?: Logger): Promise<RunningBroker> {
  const log = logger ?? createLogger({ name: 'broker', level: config.logLevel });
  const hub = new SseHub({ heartbeatMs: config.sse.heartbeatMs, flushMs: config.sse.flushMs });
  let ready = false;
  let opened: Awaited<ReturnType<typeof openStores>>;
  try {
    opened = await openStores(config, hub, log);
  } catch (err) {
    hub.stop();
    throw err;
  }
  const deps: BrokerDeps = {
    config,
    logger: log,
    hub,
    stores: opened.stores,
    ready: () => ready,
    health: () => opened.health(),
  };
  const app = createBrokerApp(deps);
  const sweeper = setInterval(() => {
    try {
      opened.sweep();
    } catch (err) {
      log.error({ err }, 'store upkeep failed');
    }
  }, config.sweepMs);
  sweeper.unref();

  const server = serve({ fetch: app.fetch, port: config.port, hostname: config.host });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', () => resolve());
    server.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  const shownHost = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  const url = `http://${shownHost}:${port}`;
  ready = true;
  log.info(
    { port, host: config.host, url, backends: config.backends, persistDir: config.persistDir ?? null },
    'broker listening',
  );

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      ready = false;
      clearInterval(sweeper);
      hub.stop();
      const http = server as unknown as { closeIdleConnections(): void; closeAllConnections(): void };
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Idle keep-alive sockets would hold close() open; busy ones get a short grace period.
        http.closeIdleConnections();
        setTimeout(() => http.closeAllConnections(), 2000).unref();
      });
      await opened.close();
      log.info({ port }, 'broker stopped');
    })();
    return closing;
  };
  return { url, port, app, deps, close };
}
