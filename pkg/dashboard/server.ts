import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Hono } from 'hono';
import { urlHost } from '../http/index.ts';
import type { Logger } from '../log/index.ts';
import { createDashboardApp, type DashboardAppOptions } from './app.ts';
import type { DashboardEnv } from './context.ts';
import { ensureBundle } from './ui/bundle.ts';

export interface DashboardServerOptions extends DashboardAppOptions {
  port: number;
  host?: string;
}

export interface RunningDashboard {
  /** Where this process listens (not BASE_URL, which is what browsers use). */
  url: string;
  port: number;
  app: Hono<DashboardEnv>;
  close(): Promise<void>;
}

/** Builds the dashboard (settings already validated) and serves it; logs `dashboard listening`. */
export async function startDashboardServer(opts: DashboardServerOptions): Promise<RunningDashboard> {
  await ensureBundle(opts.logger);
  const app = createDashboardApp(opts);
  const server = serve({ fetch: app.fetch, port: opts.port, hostname: opts.host ?? '0.0.0.0' });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { port, address } = server.address() as AddressInfo;
  const s = opts.settings;
  logStart(opts.logger, port, address, s);
  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost(opts.host ?? '0.0.0.0')}:${port}${s.basePath}`,
    port,
    app,
    close: () => {
      closing ??= new Promise<void>((r) => {
        server.close(() => r());
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
      return closing;
    },
  };
}

function logStart(
  logger: Logger,
  port: number,
  address: string,
  s: DashboardServerOptions['settings'],
): void {
  logger.info(
    {
      port,
      address,
      authMode: s.mode,
      basePath: s.basePath || '/',
      baseUrl: s.baseUrl,
      apiServiceUrl: s.apiServiceUrl,
      issuer: s.oidc?.issuer,
      allowedCallbackOrigins: s.allowedCallbackOrigins.length ? s.allowedCallbackOrigins : undefined,
    },
    'dashboard listening',
  );
}
