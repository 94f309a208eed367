import { createRoute } from '@hono/zod-openapi';
import { type AnyOpenAPIHono, route, sendError } from '../http/index.ts';
import type { BrokerDeps } from './deps.ts';

/** Liveness, readiness, and a small stats view of the in-process stores and SSE hub. */
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
      summary: 'Readiness: stores loaded and not shutting down',
      responses: { 200: { description: 'Ready' }, 503: { description: 'Not ready' } },
    }),
    (c) =>
      deps.ready && !deps.ready()
        ? sendError(c, 503, 'not_ready', 'the broker is starting or shutting down')
        : c.json({ status: 'ready', sse: deps.hub.stats(), memory: process.memoryUsage() }, 200),
  );
}
