import { createRoute } from '@hono/zod-openapi';
import { type AnyOpenAPIHono, route, sendError } from '../http/index.ts';
import type { BrokerDeps } from './deps.ts';
import { RETRY_AFTER_SECONDS } from './pg/errors.ts';

/**
 * Liveness, readiness, and a small stats view of the SSE hub. Readiness asks every durable backend
 * (a `SELECT 1`, the Redis connection state), so a replica whose storage is down leaves the Service.
 */
export function mountHealthRoutes(app: AnyOpenAPIHono, deps: BrokerDeps): void {
  route(
    app,
    createRoute({
      method: 'get',
      path: '/health',
      tags: ['Health'],
      summary: 'Liveness (also the memory contract health check)',
      responses: { 200: { description: '{status: "ok"}' } },
    }),
    (c) => c.json({ status: 'ok' }, 200),
  );
  route(
    app,
    createRoute({
      method: 'get',
      path: '/readyz',
      tags: ['Health'],
      summary: 'Readiness: stores loaded, not shutting down, and every durable backend answers',
      responses: {
        200: { description: 'Ready' },
        503: { description: 'Not ready: starting/stopping, or a storage backend (named) does not answer' },
      },
    }),
    async (c) => {
      if (deps.ready && !deps.ready())
        return sendError(c, 503, 'not_ready', 'the broker is starting or shutting down');
      const backends = (await deps.health?.()) ?? [];
      const down = backends.filter((b) => !b.ok);
      if (down.length) {
        c.header('retry-after', String(RETRY_AFTER_SECONDS));
        const what = down.map(
          (b) => `${b.backend} (${b.domains.join(', ')}) is unavailable: ${b.message ?? 'no answer'}`,
        );
        return sendError(c, 503, 'storage_unavailable', what.join('; '), { backends });
      }
      return c.json({ status: 'ready', backends, sse: deps.hub.stats(), memory: process.memoryUsage() }, 200);
    },
  );
}
