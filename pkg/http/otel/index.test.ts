import { TraceFlags } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { formatTraceparent, otlpTracesTarget, parseOtlpHeaders, parseTraceparent } from './index.ts';

const BROKER = 'http://broker:8080/v1/traces';

describe('otlpTracesTarget', () => {
  it('prefers the traces endpoint as given, then the general one plus /v1/traces, then the default', () => {
    expect(otlpTracesTarget({}, BROKER)).toEqual({ url: BROKER, headers: {}, source: 'default' });
    expect(otlpTracesTarget({})).toBeUndefined();
    expect(otlpTracesTarget({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }, BROKER)).toMatchObject(
      {
        url: 'http://collector:4318/v1/traces',
        source: 'OTEL_EXPORTER_OTLP_ENDPOINT',
      },
    );
    expect(
      otlpTracesTarget(
        {
          OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/custom/path',
        },
        BROKER,
      ),
    ).toMatchObject({
      url: 'https://traces.example/custom/path',
      source: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    });
  });

  it('merges the headers, the traces-specific ones winning', () => {
    const t = otlpTracesTarget({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc, x-tenant=a',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-tenant=b',
    });
    expect(t?.headers).toEqual({ authorization: 'Bearer abc', 'x-tenant': 'b' });
    expect(parseOtlpHeaders('novalue,=x,k=%E0%A4%A,ok=1')).toEqual({ ok: '1' });
  });

  it('is off when the SDK or the traces exporter is disabled, and refuses a bad URL by name', () => {
    const on = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' };
    expect(otlpTracesTarget({ ...on, OTEL_SDK_DISABLED: 'true' }, BROKER)).toBeUndefined();
    expect(otlpTracesTarget({ ...on, OTEL_TRACES_EXPORTER: 'none' }, BROKER)).toBeUndefined();
    expect(() => otlpTracesTarget({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT/,
    );
    expect(() => otlpTracesTarget({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'grpc://c' })).toThrow(
      /OTEL_EXPORTER_OTLP_TRACES_ENDPOINT/,
    );
  });
});

describe('traceparent', () => {
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const spanId = '00f067aa0ba902b7';

  it('formats and parses W3C trace context', () => {
    const header = formatTraceparent({ traceId, spanId, traceFlags: TraceFlags.SAMPLED });
    expect(header).toBe(`00-${traceId}-${spanId}-01`);
    expect(parseTraceparent(header)).toEqual({ traceId, spanId, traceFlags: 1, isRemote: true });
    expect(parseTraceparent(`00-${traceId}-${spanId}-00`)?.traceFlags).toBe(0);
  });

  it('rejects what the specification rejects', () => {
    for (const bad of [
      undefined,
      '',
      `ff-${traceId}-${spanId}-01`,
      `00-${'0'.repeat(32)}-${spanId}-01`,
      `00-${traceId}-${'0'.repeat(16)}-01`,
      `00-${traceId}-${spanId}-01-extra`,
      `00-${traceId.slice(1)}-${spanId}-01`,
    ])
      expect(parseTraceparent(bad)).toBeUndefined();
    // A future version may carry more fields.
    expect(parseTraceparent(`01-${traceId}-${spanId}-01-more`)?.traceId).toBe(traceId);
  });
});
