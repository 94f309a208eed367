/**
 * Where spans go, configured the standard OpenTelemetry way (OTEL_EXPORTER_OTLP_* variables). No
 * SDK import here: deciding whether tracing is on costs nothing.
 */

export interface OtlpTarget {
  /** The OTLP/HTTP traces URL (JSON encoding). */
  url: string;
  /** OTEL_EXPORTER_OTLP_HEADERS then OTEL_EXPORTER_OTLP_TRACES_HEADERS (credentials: never log them). */
  headers: Record<string, string>;
  /** Which setting chose the URL. */
  source: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' | 'OTEL_EXPORTER_OTLP_ENDPOINT' | 'default';
}

const nonEmpty = (v: string | undefined) => (v?.trim() ? v.trim() : undefined);

/** `key1=value1,key2=value2` with URL-encoded values, as the OTLP exporter specification defines it. */
export function parseOtlpHeaders(raw: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of raw?.split(',') ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) continue;
    try {
      out[decodeURIComponent(pair.slice(0, eq).trim())] = decodeURIComponent(pair.slice(eq + 1).trim());
    } catch {
      // A malformed escape: skip that header rather than fail the process over telemetry.
    }
  }
  return out;
}

function checkedUrl(url: string, variable: string): string {
  try {
    const u = new URL(url);
    if (u.protocol === 'http:' || u.protocol === 'https:') return url;
  } catch {
    // reported below
  }
  throw new RangeError(`${variable}: not an http(s) URL: ${JSON.stringify(url)}`);
}

/**
 * The traces endpoint: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, else OTEL_EXPORTER_OTLP_ENDPOINT
 * + `/v1/traces`, else `fallbackUrl` (the engine's default: the broker). Undefined when none is set,
 * or when OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn tracing off.
 */
export function otlpTracesTarget(env: NodeJS.ProcessEnv, fallbackUrl?: string): OtlpTarget | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  if (env.OTEL_TRACES_EXPORTER?.split(',').some((e) => e.trim() === 'none')) return undefined;
  const headers = {
    ...parseOtlpHeaders(env.OTEL_EXPORTER_OTLP_HEADERS),
    ...parseOtlpHeaders(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS),
  };
  const specific = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  if (specific)
    return {
      url: checkedUrl(specific, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'),
      headers,
      source: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    };
  const general = nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  if (general)
    return {
      url: checkedUrl(`${general.replace(/\/+$/, '')}/v1/traces`, 'OTEL_EXPORTER_OTLP_ENDPOINT'),
      headers,
      source: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    };
  return fallbackUrl ? { url: fallbackUrl, headers, source: 'default' } : undefined;
}
