import { SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { REDACTED } from './redact.ts';
import { RedactingSpanExporter } from './redact-span.ts';

const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLXZhbHVl';
const OPENAI = `sk-proj-${'A1b2C3d4E5f6G7h8I9j0'}KlMnOpQr`;
const BERTH = 'sk-svc-AbCdEfGhIjKlMnOpQrStUvWxYz012345';

describe('RedactingSpanExporter (trace redaction)', () => {
  it('scrubs names, attributes, events, links and the status like logs, keeping the span itself', async () => {
    const sink = new InMemorySpanExporter();
    const provider = new TracerProvider({
      spanProcessors: [new SimpleSpanProcessor({ exporter: new RedactingSpanExporter(sink) })],
    });
    const tracer = provider.getTracer('t');
    const span = tracer.startSpan(`GET https://user:${OPENAI}@models.example/v1`, {
      attributes: {
        'http.request.header.authorization': `Bearer ${JWT}`,
        api_key: 'plain-looking-value',
        'gen_ai.request.model': 'gpt-4o',
        'url.full': `https://x.example/?access_token=${JWT}`,
        tags: ['ok', BERTH],
        count: 3,
      },
    });
    span.recordException(new Error(`model call failed with key ${OPENAI}`));
    span.addEvent('retry', { note: `again with ${BERTH}` });
    span.setStatus({ code: SpanStatusCode.ERROR, message: `401 for Bearer ${JWT}` });
    span.end();
    await provider.forceFlush();

    const [out] = sink.getFinishedSpans();
    const text = JSON.stringify({
      name: out?.name,
      attrs: out?.attributes,
      events: out?.events,
      status: out?.status,
    });
    for (const secret of [JWT, OPENAI, BERTH, 'plain-looking-value']) expect(text).not.toContain(secret);
    expect(out?.attributes['http.request.header.authorization']).toBe(REDACTED);
    expect(out?.attributes['gen_ai.request.model']).toBe('gpt-4o');
    expect(out?.attributes.count).toBe(3);
    expect(out?.attributes.tags).toEqual(['ok', REDACTED]);
    expect(out?.events.map((e) => e.name)).toEqual(['exception', 'retry']);
    expect(String(out?.events[0]?.attributes?.['exception.message'])).toContain('model call failed');
    // The exported view still carries the span's identity.
    expect(out?.spanContext().spanId).toBe(span.spanContext().spanId);
    expect(out?.status.code).toBe(SpanStatusCode.ERROR);
  });
});
