import type { Context, Env, MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** What a service-specific hook learns about each finished request. */
export interface RequestInfo {
  method: string;
  /** The matched route pattern (`/v1/namespaces/:namespace/agents/:name`), never the raw path. */
  route: string;
  status: number;
  seconds: number;
}

export interface HttpMetricsOptions {
  registry: Registry;
  /** Component prefix of the metric names, e.g. `berth_api_`. */
  prefix: string;
  /** Requests not measured (probes and scrapes would drown the real traffic). */
  skip?: (path: string) => boolean;
  /** Called after each measured request, with its context (for service-specific metrics). */
  onRequest?: (c: Context, info: RequestInfo) => void;
}

// Latency of a JSON API: 1 ms to 10 s; anything slower lands in +Inf and is a problem anyway.
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
/** Paths nobody measures: liveness, readiness and the scrape itself. */
export const PROBE_PATHS = new Set(['/health', '/healthz', '/readyz', '/metrics']);

/**
 * The route label: the pattern of the handler that answered. A request no route matched ends at a
 * catch-all middleware (`*`): labelled `unmatched`, so scanners cannot create a series per path.
 */
export function routeLabel(c: Context): string {
  const pattern = routePath(c);
  return pattern === '*' || pattern === '/*' || pattern === '' ? 'unmatched' : pattern;
}

/**
 * Request count, latency and in-flight requests of one HTTP service, labelled by method, route
 * pattern and status. Latency is the time to the response's headers: a stream's own duration is
 * measured by the service (chat completions) rather than folded into this histogram.
 */
export function httpMetrics(opts: HttpMetricsOptions): MiddlewareHandler<Env> {
  const registers = [opts.registry];
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({
    name: `${opts.prefix}http_requests_total`,
    help: 'HTTP requests by method, route pattern and status',
    labelNames,
    registers,
  });
  const duration = new Histogram({
    name: `${opts.prefix}http_request_duration_seconds`,
    help: 'Time from request to response headers, by method, route pattern and status',
    labelNames,
    buckets: BUCKETS,
    registers,
  });
  const inFlight = new Gauge({
    name: `${opts.prefix}http_requests_in_flight`,
    help: 'Requests being handled (streams count until their handler returned the response)',
    registers,
  });
  const skip = opts.skip ?? ((path: string) => PROBE_PATHS.has(path));
  // The children of each label set, found once: prom-client hashes a labels object on every
  // inc/observe, which was a visible share of a small request's cost. Bounded: methods, route
  // patterns and statuses are each a small fixed set.
  const series = new Map<string, { count: { inc(): void }; time: { observe(v: number): void } }>();
  const seriesOf = (method: string, route: string, status: number) => {
    const key = `${method} ${status} ${route}`;
    let s = series.get(key);
    if (!s) {
      const labels = { method, route, status: String(status) };
      s = { count: requests.labels(labels), time: duration.labels(labels) };
      series.set(key, s);
    }
    return s;
  };
  return async (c, next) => {
    if (skip(c.req.path)) return next();
    const start = performance.now();
    inFlight.inc();
    try {
      await next();
    } finally {
      inFlight.dec();
    }
    const seconds = (performance.now() - start) / 1000;
    const method = METHODS.has(c.req.method) ? c.req.method : 'OTHER';
    const route = routeLabel(c);
    const status = c.res.status;
    const s = seriesOf(method, route, status);
    s.count.inc();
    s.time.observe(seconds);
    opts.onRequest?.(c, { method, route, status, seconds });
  };
}
