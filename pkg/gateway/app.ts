import { OpenAPIHono } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import { requestId } from 'hono/request-id';
import { agentKind, evaluatorKind, modelKind, queryKind, teamKind } from '../api/index.ts';
import type { GatewayDeps } from './deps.ts';
import { mountDocsPage } from './docs-page.ts';
import { sendError } from './errors.ts';
import { mountBrokerProxy } from './routes/broker-proxy.ts';
import { mountEvaluationRoutes } from './routes/evaluations.ts';
import { mountGenericRoutes } from './routes/generic.ts';
import { mountNamespaceRoutes } from './routes/namespaces.ts';
import { documentBrokerProxy, documentGenericRoutes } from './routes/passthrough-docs.ts';
import { mountResourceRoutes } from './routes/resources.ts';
import { mountSecretRoutes } from './routes/secrets.ts';

export interface GatewayOptions {
  /** Authentication middleware for AUTH_MODE; absent means open. */
  auth?: MiddlewareHandler;
  /** Route families mounted by other modules (API keys, /compat/v1, marketplace). */
  extensions?: Array<(app: OpenAPIHono) => void>;
  bodyLimitBytes?: number;
}

export function createGatewayApp(deps: GatewayDeps, opts: GatewayOptions = {}): OpenAPIHono {
  const app = new OpenAPIHono({
    // zod failures become the /v1 error envelope with every issue listed.
    defaultHook: (result, c) => {
      if (result.success) return;
      const issues = result.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
      const summary = issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ');
      return sendError(c, 400, 'invalid_request', `invalid request: ${summary}`, { issues });
    },
  });
  app.use('*', requestId({ headerName: 'x-request-id' }));
  app.use('*', accessLog(deps.logger));
  const limit = opts.bodyLimitBytes ?? 10 * 1024 * 1024;
  const limitBody = bodyLimit({
    maxSize: limit,
    onError: (c) => sendError(c, 413, 'payload_too_large', `request body exceeds ${limit} bytes`),
  });
  // GET/HEAD carry no body; skipping the check there also spares @hono/node-server building a full
  // Request object (bodyLimit reads req.body), a tenth of the list hot path's CPU.
  app.use('*', (c, next) =>
    c.req.method === 'GET' || c.req.method === 'HEAD' ? next() : limitBody(c, next),
  );
  app.onError((err, c) => {
    if (!(err instanceof HTTPException && err.status < 500))
      deps.logger.error({ err, path: c.req.path, requestId: c.get('requestId') }, 'unhandled error');
    if (err instanceof HTTPException && err.status < 500)
      return sendError(c, err.status, 'invalid_request', err.message);
    if (err instanceof SyntaxError)
      return sendError(c, 400, 'invalid_json', `malformed JSON body: ${err.message}`);
    return sendError(c, 500, 'internal', 'internal error; see the server log with this request id');
  });
  app.notFound((c) => sendError(c, 404, 'not_found', `no route for ${c.req.method} ${c.req.path}`));

  app.get('/health', (c) => c.json({ status: 'ok' }));
  app.doc31('/openapi.json', { openapi: '3.1.0', info: { title: 'Berth API', version: deps.version } });
  mountDocsPage(app, '/docs', '/openapi.json', 'Berth API');
  if (opts.auth) app.use('/v1/*', opts.auth).use('/compat/*', opts.auth).use('/api/*', opts.auth);

  for (const def of [agentKind, teamKind, queryKind, modelKind, evaluatorKind])
    mountResourceRoutes(app, deps, def);
  mountEvaluationRoutes(app, deps);
  mountSecretRoutes(app, deps);
  mountNamespaceRoutes(app, deps);
  mountGenericRoutes(app, deps);
  documentGenericRoutes(app);
  mountBrokerProxy(app, deps);
  documentBrokerProxy(app);
  for (const extend of opts.extensions ?? []) extend(app);
  return app;
}

/**
 * One debug line per request; at trace level with the request headers. Credentials in them are
 * redacted by pkg/log (the redaction test runs at trace level). Costs nothing when debug is off.
 */
function accessLog(logger: GatewayDeps['logger']): MiddlewareHandler {
  return async (c, next) => {
    if (!logger.isLevelEnabled('debug')) return next();
    const start = performance.now();
    await next();
    const principal = c.get('principal' as never) as { name?: string } | undefined;
    logger.debug(
      {
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        ms: Math.round((performance.now() - start) * 10) / 10,
        requestId: c.get('requestId' as never),
        principal: principal?.name,
        ...(logger.isLevelEnabled('trace') ? { headers: c.req.header() } : {}),
      },
      'request',
    );
  };
}
