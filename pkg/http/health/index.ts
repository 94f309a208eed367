import { createRoute, type RouteConfig } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { type CodeWithStatus, type ErrorBody, envelope } from '../errors/index.ts';
import { type AnyOpenAPIHono, route } from '../openapi/index.ts';
import { requestIdOf } from '../request-id/index.ts';

/**
 * A readiness verdict: ready with details, or not ready with a code and a reason (and headers).
 * The code is one whose status is 503, the answer of `/readyz` when not ready.
 */
export type Readiness =
  | { ready: true; details?: Record<string, unknown> }
  | {
      ready: false;
      code: CodeWithStatus<503>;
      message: string;
      details?: unknown;
      headers?: Record<string, string>;
    };

export interface HealthOptions {
  /** Asked on every `GET /readyz`. */
  readiness: () => Readiness | Promise<Readiness>;
  /** What the service is called in the summaries (`the broker`, `the API service`). */
  what: string;
  /**
   * List the probes in the OpenAPI document (default true). The API service keeps them out: there
   * every documented route is authenticated, and probes never are.
   */
  document?: boolean;
}

const tags = ['Health'];

/** The probe paths, answered the same way by the app's routes and by `answerProbes` on the socket. */
export const HEALTH_PATHS = ['/health', '/healthz', '/readyz'] as const;

export interface ProbeAnswer {
  status: 200 | 503;
  body: Record<string, unknown> | ErrorBody;
  headers: Record<string, string>;
}

/**
 * What a probe answers — one source for the app's routes and `answerProbes`. A not-ready answer is
 * the error envelope (`requestId` is the caller's, as the envelope carries it everywhere).
 */
export async function probeAnswer(
  path: (typeof HEALTH_PATHS)[number],
  opts: Pick<HealthOptions, 'readiness'>,
  requestId: string | undefined,
): Promise<ProbeAnswer> {
  if (path !== '/readyz') return { status: 200, body: { status: 'ok' }, headers: {} };
  const r = await opts.readiness();
  if (r.ready) return { status: 200, body: { status: 'ready', ...r.details }, headers: {} };
  return {
    status: 503,
    body: envelope(r.code, r.message, requestId, r.details),
    headers: r.headers ?? {},
  };
}

/**
 * The same probes on every Berth server: `GET /health` (the spec's liveness, also the memory
 * contract's health check) and `GET /healthz` answer 200 while the process serves; `GET /readyz`
 * answers 200 when the service can take traffic and 503 otherwise — starting, draining for
 * shutdown, or a dependency down — so Kubernetes takes the pod out of its Service.
 */
export function mountHealthRoutes(app: AnyOpenAPIHono, opts: HealthOptions): void {
  const get = (config: RouteConfig, handler: (c: Context) => Response | Promise<Response>) => {
    if (opts.document === false) app.get(config.path, handler);
    else route(app, config, handler);
  };
  const answer = async (c: Context, path: (typeof HEALTH_PATHS)[number]) => {
    const a = await probeAnswer(path, opts, requestIdOf(c));
    for (const [name, value] of Object.entries(a.headers)) c.header(name, value);
    // Answered, not thrown: "not ready" is what the probe asks, not a failure to log.
    return c.json(a.body, a.status);
  };
  for (const path of ['/health', '/healthz'] as const)
    get(
      createRoute({
        method: 'get',
        path,
        tags,
        summary: `Liveness: ${opts.what} process answers`,
        responses: { 200: { description: '{status: "ok"}' } },
      }),
      (c) => answer(c, path),
    );
  get(
    createRoute({
      method: 'get',
      path: '/readyz',
      tags,
      summary: `Readiness: ${opts.what} takes traffic (false while starting or draining for shutdown)`,
      responses: {
        200: { description: '{status: "ready", ...}' },
        503: { description: 'Not ready: error envelope naming why (`shutting_down`, `not_ready`, ...)' },
      },
    }),
    (c) => answer(c, '/readyz'),
  );
}
