import type { HttpBindings } from '@hono/node-server';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Env, MiddlewareHandler } from 'hono';
import type { Logger } from '../../log/index.ts';
import { PROBE_PATHS, routeLabel } from '../metrics/middleware.ts';
import { createTracerProvider } from './exporter.ts';
import type { OtlpTarget } from './target.ts';
import { parseTraceparent } from './traceparent.ts';

export interface ServerTracing {
  middleware: MiddlewareHandler<Env>;
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>;
}

export interface ServerTracingOptions {
  /** `service.name` of the spans (`berth-api`, `berth-broker`). */
  serviceName: string;
  target: OtlpTarget;
  logger: Logger;
  /** Requests without a span; probes and scrapes always. */
  skip?: (path: string) => boolean;
}

/**
 * One SERVER span per request, exported to `target`. A caller's `traceparent` makes the span its
 * child. Attributes follow the HTTP semantic conventions with the route pattern only: no path, query
 * string or header, so no name or credential lands in a span.
 */
export function serverTracing(opts: ServerTracingOptions): ServerTracing {
  const { target } = opts;
  const provider = createTracerProvider(opts.serviceName, target);
  const tracer = provider.getTracer('berth-http');
  const skip = opts.skip ?? (() => false);
  const origin = new URL(target.url);
  opts.logger.info(
    { service: opts.serviceName, endpoint: `${origin.origin}${origin.pathname}`, source: target.source },
    'exporting server spans',
  );
  return {
    shutdown: () => provider.shutdown(),
    middleware: async (c, next) => {
      if (PROBE_PATHS.has(c.req.path) || skip(c.req.path)) return next();
      const parent = parseTraceparent(c.req.header('traceparent'));
      const ctx = parent ? trace.setSpanContext(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
      const method = c.req.method;
      const span = tracer.startSpan(
        method,
        { kind: SpanKind.SERVER, attributes: { 'http.request.method': method } },
        ctx,
      );
      try {
        await next();
      } finally {
        const route = routeLabel(c);
        const status = c.res.status;
        span.updateName(`${method} ${route}`);
        span.setAttributes({ 'http.route': route, 'http.response.status_code': status });
        if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        // A stream's span lasts until its last byte; an ordinary response ends it now.
        const out = (c.env as HttpBindings | undefined)?.outgoing;
        if (out && !out.writableFinished && !out.destroyed) out.once('close', () => span.end());
        else span.end();
      }
    },
  };
}
