import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { serve } from '@hono/node-server';
import { OpenAPIHono } from '@hono/zod-openapi';
import { requestId } from 'hono/request-id';
import { secretSourceFrom, startApiKeyCache } from '../../pkg/auth/api-keys/secret-cache.ts';
import { ApiKeyService } from '../../pkg/auth/api-keys/service.ts';
import type { ApiKeyServiceOptions } from '../../pkg/auth/api-keys/types.ts';
import {
  type AuthMode,
  type AuthVariables,
  apiKeyRoutes,
  authMiddleware,
  type JwtVerifier,
} from '../../pkg/auth/index.ts';
import { errorHandler } from '../../pkg/http/index.ts';
import type { InformerCache } from '../../pkg/kube/cache.ts';
import { createClient } from '../../pkg/kube/client/index.ts';
import { Scheme } from '../../pkg/kube/kinds.ts';
import { createLogger, type Logger } from '../../pkg/log/index.ts';
import { kubeConfig } from '../support/kube.ts';

/** Every line every component logged during a test file, for leak checks. */
export function captureLogs(): { logger: Logger; text(): string; lines: string[] } {
  const lines: string[] = [];
  const dest = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return {
    logger: createLogger({ level: 'trace', destination: dest as never }),
    text: () => lines.join(''),
    lines,
  };
}

/** The API key service of one instance namespace, reading through its own informer, as the gateway will. */
export async function startKeyService(
  namespace: string,
  logger: Logger,
  extra: Partial<ApiKeyServiceOptions> = {},
): Promise<{ service: ApiKeyService; cache: InformerCache; stop(): Promise<void> }> {
  const kc = kubeConfig('gateway');
  const cache = await startApiKeyCache({ kc, namespace, logger });
  const service = new ApiKeyService({
    client: createClient({ kc, scheme: new Scheme() }),
    namespace,
    source: secretSourceFrom(cache, namespace),
    logger,
    bcryptCost: 4,
    lastUsedFlushMs: 0,
    ...extra,
  });
  return {
    service,
    cache,
    async stop() {
      await service.stop();
      await cache.stop();
    },
  };
}

export interface TestApi {
  url: string;
  stop(): Promise<void>;
}

/**
 * A small stand-in for the API service (the gateway does not exist yet): request id, the auth
 * middleware, the API key routes, an access log like the gateway's, and `/v1/whoami`.
 */
export async function serveApi(opts: {
  mode: AuthMode;
  service: ApiKeyService;
  jwt?: JwtVerifier;
  logger: Logger;
}): Promise<TestApi> {
  const app = new OpenAPIHono<{ Variables: AuthVariables }>();
  app.use('*', requestId());
  // An access log that logs the headers, so the leak test proves redaction rather than silence.
  app.use('*', async (c, next) => {
    await next();
    opts.logger.debug(
      { method: c.req.method, path: c.req.path, headers: c.req.header(), status: c.res.status },
      'request',
    );
  });
  // The middleware throws its refusals; the app's error handler renders them, as in the API service.
  app.onError(errorHandler(opts.logger));
  app.use(
    '*',
    authMiddleware({ mode: opts.mode, apiKeys: opts.service, jwt: opts.jwt, logger: opts.logger }),
  );
  app.get('/health', (c) => c.json({ status: 'ok' }));
  app.get('/v1/whoami', (c) => c.json(c.get('principal')));
  // Just enough of /compat/v1 for the real openai SDK to make an authenticated call.
  app.get('/compat/v1/models', (c) => c.json({ object: 'list', data: [] }));
  app.route('/v1/api-keys', apiKeyRoutes(opts.service, { logger: opts.logger }));
  app.doc31('/openapi.json', { openapi: '3.1.0', info: { title: 'auth test', version: '0' } });
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

export const basic = (pk: string, sk: string) => `Basic ${Buffer.from(`${pk}:${sk}`).toString('base64')}`;

/** Creates a key through the HTTP route (as a client would) and returns its pair. */
export async function createKey(
  api: TestApi,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{ public_key: string; secret_key: string; id: string }> {
  const res = await fetch(`${api.url}/v1/api-keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  if (res.status !== 201) throw new Error(`create key: ${res.status} ${await res.text()}`);
  return (await res.json()) as { public_key: string; secret_key: string; id: string };
}

/** Polls `probe` until it returns true (bounded); returns the elapsed milliseconds. */
export async function until(probe: () => Promise<boolean>, timeoutMs = 5000, everyMs = 10): Promise<number> {
  const start = performance.now();
  while (!(await probe())) {
    if (performance.now() - start > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return performance.now() - start;
}
