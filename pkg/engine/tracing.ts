/**
 * Spans of query execution, exported with the OpenTelemetry SDK to the broker's OTLP ingest. The
 * provider belongs to the engine (not registered globally) so several engines — or the controller and
 * the API service in one `berth up` process — never fight over global state.
 */
import {
  type Attributes,
  type Context,
  context,
  type Span,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';

export const SESSION_ATTRIBUTE = 'svc.session.id';

export interface Tracing {
  tracer: Tracer;
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

export function createTracing(brokerUrl: string | undefined, serviceName: string): Tracing {
  const spanProcessors = brokerUrl
    ? [
        new BatchSpanProcessor({
          exporter: new OTLPTraceExporter({ url: `${brokerUrl.replace(/\/+$/, '')}/v1/traces` }),
          // Short delay: the dashboard shows a query's trace while it is fresh; batches still bound requests.
          scheduledDelayMillis: 500,
          maxExportBatchSize: 512,
          maxQueueSize: 8192,
        }),
      ]
    : [];
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors,
  });
  return {
    tracer: provider.getTracer('berth-engine'),
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}

/** The root span of a query: a new trace, so each query is one trace whatever the caller's context. */
export function startRootSpan(tracer: Tracer, name: string, attributes: Attributes): Span {
  return tracer.startSpan(name, { root: true, attributes }, context.active());
}

/**
 * Runs `fn` in a child span of `parent`; the span records failures and always ends. Contexts are passed
 * explicitly because no global context manager is registered.
 */
export async function inSpan<T>(
  tracer: Tracer,
  parent: Context,
  name: string,
  attributes: Attributes,
  fn: (ctx: Context, span: Span) => Promise<T>,
): Promise<T> {
  const span = tracer.startSpan(name, { attributes }, parent);
  try {
    return await fn(trace.setSpan(parent, span), span);
  } catch (err) {
    span.recordException(err instanceof Error ? err : String(err));
    span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
    throw err;
  } finally {
    span.end();
  }
}
