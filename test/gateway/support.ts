import { SHARED_CACHE } from '../../pkg/api/index.ts';
import { type RunningGateway, startGatewayServer } from '../../pkg/gateway/server.ts';
import { InformerCache } from '../../pkg/kube/cache.ts';
import type { Logger } from '../../pkg/log/index.ts';
import { captureLogs } from '../auth/support.ts';
import { kubeConfig } from '../support/kube.ts';

export interface TestService {
  url: string;
  /** Everything the service logged, when it used its own (trace-level) capture. */
  logs: () => string;
  gateway: RunningGateway;
  cache: InformerCache;
  close(): Promise<void>;
}

/**
 * The real API service as `berth api` builds it: the shared informer cache of its namespace read
 * with the gateway user's identity, startGatewayServer (auth from `env`, API keys, /compat/v1).
 */
export async function startService(opts: {
  namespace: string;
  env?: NodeJS.ProcessEnv;
  brokerUrl?: string;
  logger?: Logger;
  bodyLimitBytes?: number;
  /** Share one informer cache between instances of one namespace (keeps suites lean). */
  cache?: InformerCache;
  /** Serve `namespace` only (an instance installed for one tenant). */
  confined?: boolean;
}): Promise<TestService> {
  // By default every line (trace level: the access log with headers) is kept for leak checks.
  const captured = opts.logger ? undefined : captureLogs();
  const logger = opts.logger ?? (captured as ReturnType<typeof captureLogs>).logger;
  const kc = kubeConfig('gateway');
  const cache = opts.cache ?? InformerCache.of({ kc, namespace: opts.namespace, logger }, SHARED_CACHE);
  if (!opts.cache) {
    cache.start();
    await cache.waitForSync(30_000);
  }
  const gateway = await startGatewayServer({
    kc,
    namespace: opts.namespace,
    confined: opts.confined,
    cache,
    brokerUrl: opts.brokerUrl,
    logger,
    port: 0,
    host: '127.0.0.1',
    env: opts.env ?? { AUTH_MODE: 'open' },
    bcryptCost: 4,
    bodyLimitBytes: opts.bodyLimitBytes,
  });
  return {
    url: gateway.url,
    logs: () => captured?.text() ?? '',
    gateway,
    cache,
    async close() {
      await gateway.close();
      if (!opts.cache) await cache.stop();
    },
  };
}

export const basic = (pk: string, sk: string) => `Basic ${Buffer.from(`${pk}:${sk}`).toString('base64')}`;

/** A small JSON client for one service. */
export function client(base: string, headers: Record<string, string> = {}) {
  const call = async (method: string, path: string, body?: unknown, extra: Record<string, string> = {}) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...headers,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...extra,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let json: any;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, body: json, text, headers: res.headers };
  };
  return {
    call,
    get: (p: string, extra?: Record<string, string>) => call('GET', p, undefined, extra),
    post: (p: string, b: unknown, extra?: Record<string, string>) => call('POST', p, b, extra),
    put: (p: string, b: unknown) => call('PUT', p, b),
    patch: (p: string, b: unknown) => call('PATCH', p, b),
    del: (p: string) => call('DELETE', p),
  };
}
export type Client = ReturnType<typeof client>;
