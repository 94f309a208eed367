import { OpenAPIHono } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import {
  agentKind,
  evaluatorKind,
  mcpServerKind,
  memoryKind,
  modelKind,
  queryKind,
  teamKind,
  toolKind,
} from '../api/index.ts';
import type { AuthVariables } from '../auth/index.ts';
import {
  accessLog,
  type BodyLimitVariables,
  bodyLimit,
  type JsonDepthVariables,
  jsonDepthLimit,
  mountDocsPage,
  mountHealthRoutes,
  mountMetricsRoute,
  notFoundHandler,
  type Readiness,
  type RequestIdVariables,
  requestId,
  validationHook,
} from '../http/index.ts';
import { mountApprovalRoutes } from './approvals/routes.ts';
import { confineToNamespace } from './confine/index.ts';
import type { GatewayDeps } from './deps.ts';
import { gatewayErrorHandler } from './kube-error-mapper.ts';
import type { ApiMetrics } from './metrics.ts';
import { mountBrokerProxy } from './routes/broker-proxy.ts';
import { mountEvaluationRoutes } from './routes/evaluations.ts';
import { mountGenericRoutes } from './routes/generic.ts';
import { mountNamespaceRoutes } from './routes/namespaces.ts';
import { documentBrokerProxy, documentGenericRoutes } from './routes/passthrough-docs.ts';
import { mountPermissionRoutes } from './routes/permissions.ts';
import { mountResourceRoutes } from './routes/resources.ts';
import { mountSecretRoutes } from './routes/secrets.ts';

/** The API service app's context variables: what its middleware set. */
export type ApiEnv = {
  Variables: RequestIdVariables & BodyLimitVariables & JsonDepthVariables & AuthVariables;
};

export interface GatewayOptions {
  /** Authentication middleware for AUTH_MODE; absent means open. */
  auth?: MiddlewareHandler;
  /** Route families mounted by other modules (API keys, /compat/v1, marketplace, /mcp). */
  extensions?: Array<(app: OpenAPIHono<ApiEnv>) => void>;
  bodyLimitBytes?: number;
  /** First in the chain: own server spans (OTEL_* set). */
  tracing?: MiddlewareHandler;
  /** `/metrics` (behind `auth`) and request metrics. */
  metrics?: ApiMetrics;
  /** While draining: refuses new requests (probes and scrapes excepted). */
  refuseNew?: MiddlewareHandler;
  /** `/readyz`; ready unless given. */
  readiness?: () => Readiness;
}

export function createGatewayApp(deps: GatewayDeps, opts: GatewayOptions = {}): OpenAPIHono<ApiEnv> {
  // Built on pkg/http like the broker, so the same fault gets the same status and code in both.
  const app = new OpenAPIHono<ApiEnv>({ defaultHook: validationHook });
  // Spans and metrics first: they see every answer, refusals and errors included.
  if (opts.tracing) app.use('*', opts.tracing);
  if (opts.metrics) app.use('*', opts.metrics.middleware);
  app.use('*', requestId());
  if (opts.refuseNew) app.use('*', opts.refuseNew);
  app.use(
    '*',
    accessLog<ApiEnv>(deps.logger, {
      who: (c) => ({ principal: c.get('principal')?.name }),
      traceHeaders: true,
    }),
  );
  // Streams (never buffers) and skips GET/HEAD, which keeps the list hot path off the body.
  app.use('*', bodyLimit(opts.bodyLimitBytes ?? 10 * 1024 * 1024));
  app.use('*', jsonDepthLimit());
  app.onError(gatewayErrorHandler(deps.logger));
  app.notFound(notFoundHandler);

  mountHealthRoutes(app, {
    what: 'the API service',
    readiness: opts.readiness ?? (() => ({ ready: true })),
    document: false,
  });
  // Scrapes authenticate like any API call (open in `open` mode); probes never need to.
  if (opts.metrics) {
    if (opts.auth) app.use('/metrics', opts.auth);
    mountMetricsRoute(app, [opts.metrics.registry], { authenticated: true });
  }
  app.doc31('/openapi.json', { openapi: '3.1.0', info: { title: 'Berth API', version: deps.version } });
  mountDocsPage(app, '/docs', '/openapi.json', 'Berth API');
  if (opts.auth)
    app.use('/v1/*', opts.auth).use('/compat/*', opts.auth).use('/api/*', opts.auth).use('/mcp', opts.auth);
  const confine = confineToNamespace(deps.confinedTo);
  app.use('/v1/namespaces/:namespace/*', confine).use('/api/v1/namespaces/:namespace/*', confine);
  app.use('/v1/resources/*', confine);

  for (const def of [agentKind, teamKind, queryKind, modelKind, toolKind, memoryKind, evaluatorKind])
    mountResourceRoutes(app, deps, def);
  // Read-only: MCP servers are declared with kubectl; the dashboard lists them with their tools.
  mountResourceRoutes(app, deps, mcpServerKind, { readOnly: true });
  mountEvaluationRoutes(app, deps);
  mountPermissionRoutes(app, deps);
  mountApprovalRoutes(app, deps);
  mountSecretRoutes(app, deps);
  mountNamespaceRoutes(app, deps);
  mountGenericRoutes(app, deps);
  documentGenericRoutes(app);
  mountBrokerProxy(app, deps);
  documentBrokerProxy(app);
  for (const extend of opts.extensions ?? []) extend(app);
  return app;
}
