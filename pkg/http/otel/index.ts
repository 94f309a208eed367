import type { Logger } from '../../log/index.ts';
import type { ServerTracing } from './server-spans.ts';
import { otlpTracesTarget } from './target.ts';

export type { ServerTracing } from './server-spans.ts';
export { type OtlpTarget, otlpTracesTarget, parseOtlpHeaders } from './target.ts';
export { formatTraceparent, parseTraceparent } from './traceparent.ts';

/**
 * A server's own spans when OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set,
 * else undefined (off by default). The OpenTelemetry SDK is imported only then: it is a large part
 * of an idle process's memory otherwise.
 */
export async function loadServerTracing(opts: {
  serviceName: string;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  skip?: (path: string) => boolean;
}): Promise<ServerTracing | undefined> {
  const target = otlpTracesTarget(opts.env);
  if (!target) return undefined;
  const { serverTracing } = await import('./server-spans.ts');
  return serverTracing({ ...opts, target });
}
