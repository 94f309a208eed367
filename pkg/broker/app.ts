import { OpenAPIHono } from '@hono/zod-openapi';
import {
  bodyLimit,
  errorHandler,
  jsonDepthLimit,
  MAX_JSON_DEPTH,
  mountDocsPage,
  mountMetricsRoute,
  notFoundHandler,
  requestId,
  validationHook,
} from '../http/index.ts';
import { chunkRoutes } from './chunks/routes.ts';
import { type DomainRoutes, honoPath } from './core/routes.ts';
import type { BrokerDeps } from './deps.ts';
import { eventRoutes } from './events/routes.ts';
import { mountBrokerHealth, refuseNewWatches } from './health.ts';
import { MemoryIdempotencyStore } from './idempotency/memory-store.ts';
import { idempotent } from './idempotency/middleware.ts';
import { conversationRoutes } from './messages/conversation-routes.ts';
import { messageRoutes } from './messages/routes.ts';
import { sessionRoutes } from './sessions/routes.ts';
import { OTLP_TRACES_PATH, traceRoutes } from './traces/routes.ts';

/** Every domain's routes, in the order they are mounted (and described in /openapi.json). */
const DOMAINS: Array<DomainRoutes<BrokerDeps>> = [
  messageRoutes,
  conversationRoutes,
  chunkRoutes,
  eventRoutes,
  sessionRoutes,
  traceRoutes,
];

export const BROKER_VERSION = process.env.npm_package_version ?? '0.1.0';

/** The broker's HTTP surface: every route validated by zod and described in /openapi.json. */
export function createBrokerApp(deps: BrokerDeps): OpenAPIHono {
  const app = new OpenAPIHono({ defaultHook: validationHook });
  // Spans and metrics first: they see every answer, refusals and errors included.
  if (deps.tracing) app.use('*', deps.tracing);
  if (deps.metrics) app.use('*', deps.metrics.middleware);
  app.use('*', requestId());
  // BROKER_AUTH=serviceaccount: who the caller is, before anything reads a body (auth/middleware.ts).
  if (deps.auth) app.use('*', deps.auth);
  app.use('*', refuseNewWatches(deps));
  app.use('*', bodyLimit(deps.config.bodyLimitBytes));
  // OTLP ingest scans each export for its spans' text anyway and checks the depth in that pass.
  app.use('*', jsonDepthLimit(MAX_JSON_DEPTH, { checkedByRoute: (path) => path === OTLP_TRACES_PATH }));
  // The Query finalizer's purges carry an Idempotency-Key: one repeated after a controller's death
  // (on any replica) is answered, not run again.
  const store = deps.idempotency ?? new MemoryIdempotencyStore();
  const purges = idempotent(store);
  for (const path of DOMAINS.flatMap((d) => d.purges ?? [])) app.use(honoPath(path), purges);
  // So do the engine's memory writes: one resent after a connection closed under it (a replica
  // draining) is stored once.
  const writes = idempotent(store, ['POST']);
  for (const path of DOMAINS.flatMap((d) => d.writes ?? [])) app.use(honoPath(path), writes);
  app.onError(errorHandler(deps.logger));
  app.notFound(notFoundHandler);

  mountBrokerHealth(app, deps);
  if (deps.metrics) mountMetricsRoute(app, [deps.metrics.registry]);
  for (const d of DOMAINS) d.mount(app, deps);

  app.doc31('/openapi.json', {
    openapi: '3.1.0',
    info: {
      title: 'Berth broker',
      version: BROKER_VERSION,
      description: 'Messages, conversations (memory contract), chunks, traces, events and sessions.',
    },
  });
  mountDocsPage(app, '/api-docs', '/openapi.json', 'Berth broker');
  return app;
}
