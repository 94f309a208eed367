/**
 * The provider that sends spans. Providers are never registered globally: `berth up` runs the API
 * service, broker and engine in one process, each with its own `service.name`. This module loads the
 * OpenTelemetry SDK: import it only when tracing is on (see target.ts).
 */
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { RedactingSpanExporter } from '../../log/redact-span.ts';
import type { OtlpTarget } from './target.ts';

/** A tracer provider exporting to `target` in batches; without a target spans are made and dropped. */
export function createTracerProvider(
  serviceName: string,
  target: OtlpTarget | undefined,
  /** Extra headers per export (a broker token that rotates), asked for the target URL each time. */
  auth?: (url: URL) => Record<string, string>,
): TracerProvider {
  const url = target ? new URL(target.url) : undefined;
  const headers = auth && target && url ? async () => ({ ...auth(url), ...target.headers }) : target?.headers;
  const spanProcessors = target
    ? [
        new BatchSpanProcessor({
          // Trace redaction (the spec): spans leave scrubbed like log lines (pkg/log/redact-span.ts).
          exporter: new RedactingSpanExporter(new OTLPTraceExporter({ url: target.url, headers })),
          // Short delay: the dashboard shows a query's trace while it is fresh; batches still bound requests.
          scheduledDelayMillis: 500,
          maxExportBatchSize: 512,
          maxQueueSize: 8192,
        }),
      ]
    : [];
  return new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors,
  });
}
