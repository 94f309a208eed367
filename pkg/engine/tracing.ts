/**
 * Spans of query execution, exported with the OpenTelemetry SDK over OTLP/HTTP: to
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT (with their _HEADERS) when set,
 * else to the broker's ingest. The provider belongs to the engine (not registered globally) so several
 * engines — or the controller and the API service in one `berth up` process — never fight over
 * global state. For the same reason the active span lives in the engine's own AsyncLocalStorage:
 * `inSpan` sets it, and the engine's fetch reads it to send `traceparent` to models, tools and memories.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  type Attributes,
  type Context,
  context,
  type Span,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { createTracerProvider } from '../http/otel/exporter.ts';
import { formatTraceparent, type OtlpTarget, otlpTracesTarget } from '../http/otel/index.ts';

/** The spec's session attribute; `session.id` (semantic conventions) carries the same value. */
export const SESSION_ATTRIBUTE = 'svc.session.id';
export const SEMCONV_SESSION_ATTRIBUTE = 'session.id';

export interface Tracing {
  tracer: Tracer;
  /** Where spans go (undefined: nowhere); for the start-up log line, never with its headers. */
  target: OtlpTarget | undefined;
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

export function createTracing(
  brokerUrl: string | undefined,
  serviceName: string,
  env: NodeJS.ProcessEnv = process.env,
  /** The broker token for the exports, when the traces URL is a broker (BrokerCredentials.headersFor). */
  brokerAuth?: (url: URL) => Record<string, string>,
): Tracing {
  const fallback = brokerUrl ? `${brokerUrl.replace(/\/+$/, '')}/v1/traces` : undefined;
  const target = otlpTracesTarget(env, fallback);
  const provider = createTracerProvider(serviceName, target, brokerAuth);
  return {
    tracer: provider.getTracer('berth-engine'),
    target,
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}

const activeSpan = new AsyncLocalStorage<Context>();

/** `traceparent` of the span the caller runs in (inside `inSpan`), or undefined outside any. */
export function currentTraceparent(): string | undefined {
  const ctx = activeSpan.getStore();
  const sc = ctx && trace.getSpanContext(ctx);
  return sc && trace.isSpanContextValid(sc) ? formatTraceparent(sc) : undefined;
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
  const ctx = trace.setSpan(parent, span);
  try {
    return await activeSpan.run(ctx, () => fn(ctx, span));
  } catch (err) {
    span.recordException(err instanceof Error ? err : String(err));
    span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
    throw err;
  } finally {
    span.end();
  }
}
