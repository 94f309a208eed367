/**
 * W3C Trace Context `traceparent` by hand: two small functions instead of the
 * SDK's global propagator, because Berth never registers global OpenTelemetry state (several
 * components share one process in `berth up`).
 */
import type { SpanContext } from '@opentelemetry/api';

// TraceFlags.SAMPLED, written out: a value import would load @opentelemetry/api (about a hundred
// modules) into every process that parses a traceparent, tracing on or off (docs/broker.md "Footprint").
const SAMPLED = 0x01;

const TRACEPARENT = /^([\da-f]{2})-([\da-f]{32})-([\da-f]{16})-([\da-f]{2})(-.*)?$/;
const INVALID_TRACE = /^0+$/;

/** `00-<trace id>-<span id>-<flags>` of a span context. */
export function formatTraceparent(sc: SpanContext): string {
  const flags = (sc.traceFlags & 0xff).toString(16).padStart(2, '0');
  return `00-${sc.traceId}-${sc.spanId}-${flags}`;
}

/** The remote parent a request names, or undefined when the header is absent or invalid. */
export function parseTraceparent(header: string | undefined): SpanContext | undefined {
  const m = header ? TRACEPARENT.exec(header.trim().toLowerCase()) : null;
  if (!m) return undefined;
  const [, version, traceId, spanId, flags, rest] = m as unknown as [
    string,
    string,
    string,
    string,
    string,
    string?,
  ];
  // Version ff is forbidden; version 00 has exactly four fields.
  if (version === 'ff' || (version === '00' && rest)) return undefined;
  if (INVALID_TRACE.test(traceId) || INVALID_TRACE.test(spanId)) return undefined;
  return {
    traceId,
    spanId,
    traceFlags: Number.parseInt(flags, 16) & SAMPLED,
    isRemote: true,
  };
}
