import type { Env, MiddlewareHandler } from 'hono';
import {
  type AnyOpenAPIHono,
  httpError,
  mountHealthRoutes,
  type Readiness,
  renderEnvelope,
} from '../http/index.ts';
import type { BrokerDeps } from './deps.ts';
import { RETRY_AFTER_SECONDS } from './pg/errors.ts';

/**
 * Liveness (`/health`, `/healthz`), readiness (`/readyz`) with a small stats view of the SSE hub.
 * Readiness asks every durable backend (a `SELECT 1`, the Redis connection state), so a replica
 * whose storage is down leaves the Service; it is false while starting and while draining.
 */
export function mountBrokerHealth(app: AnyOpenAPIHono, deps: BrokerDeps): void {
  mountHealthRoutes(app, { what: 'the broker', readiness: () => brokerReadiness(deps) });
}

export async function brokerReadiness(deps: BrokerDeps): Promise<Readiness> {
  if (deps.draining?.())
    return { ready: false, code: 'shutting_down', message: 'the broker is draining for shutdown' };
  if (deps.ready && !deps.ready())
    return { ready: false, code: 'not_ready', message: 'the broker is starting or shutting down' };
  const backends = (await deps.health?.()) ?? [];
  const down = backends.filter((b) => !b.ok);
  if (down.length) {
    const what = down.map(
      (b) => `${b.backend} (${b.domains.join(', ')}) is unavailable: ${b.message ?? 'no answer'}`,
    );
    return {
      ready: false,
      code: 'storage_unavailable',
      message: what.join('; '),
      details: { backends },
      headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
    };
  }
  return {
    ready: true,
    details: { backends, sse: deps.hub.stats(), memory: process.memoryUsage() },
  };
}

/**
 * While draining, a new SSE watch (`watch=true`, `GET /stream/{query}`) gets 503 `shutting_down`:
 * it would only be cut at the end of the grace period; the reader reconnects to another replica.
 * Everything else is still served, so the queries whose streams are draining can still complete.
 */
export function refuseNewWatches(deps: BrokerDeps): MiddlewareHandler<Env> {
  return async (c, next) => {
    if (!deps.draining?.() || c.req.method !== 'GET') return next();
    const watch = ['true', '1'].includes(c.req.query('watch') ?? '') || /^\/stream\/[^/]+$/.test(c.req.path);
    if (!watch) return next();
    c.header('retry-after', '1');
    c.header('connection', 'close');
    // Answered here, not thrown: a refusal while draining is no failure for the error handler to log.
    return renderEnvelope(
      c,
      httpError('shutting_down', 'the broker is shutting down; watch on another replica'),
    );
  };
}
