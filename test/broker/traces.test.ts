import { gzipSync } from 'node:zlib';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { SimpleSpanProcessor, type SpanExporter, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningBroker } from '../../pkg/broker/server.ts';
import { decodeTraceResponse, encodeTraceRequest } from '../../pkg/broker/traces/otlp-proto.ts';
import { collect, json, post, startTestBroker } from './harness.ts';

let b: RunningBroker;
beforeAll(async () => {
  b = await startTestBroker();
});
afterAll(() => b.close());

async function emit(exporter: SpanExporter, session: string): Promise<string> {
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'test' }),
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
  });
  const tracer = provider.getTracer('t');
  const root = tracer.startSpan('query', { root: true, attributes: { 'svc.session.id': session } });
  const { trace, context } = await import('@opentelemetry/api');
  const child = tracer.startSpan('llm', {}, trace.setSpan(context.active(), root));
  child.end();
  root.end();
  await provider.forceFlush();
  await provider.shutdown();
  return root.spanContext().traceId;
}

describe('OTLP ingest with the real exporters', () => {
  for (const [kind, Exporter] of [
    ['JSON', JsonExporter],
    ['protobuf', ProtoExporter],
  ] as const) {
    it(`stores spans sent by the ${kind} exporter, grouped by trace, with hex ids`, async () => {
      const session = `sess-${kind}`;
      const traceId = await emit(new Exporter({ url: `${b.url}/v1/traces` }), session);
      const t = await json(fetch(`${b.url}/traces/${traceId}`));
      expect(t.traceId).toBe(traceId);
      expect(t.spans.map((s: any) => s.name).sort()).toEqual(['llm', 'query']);
      const child = t.spans.find((s: any) => s.name === 'llm');
      const root = t.spans.find((s: any) => s.name === 'query');
      expect(child.parentSpanId).toBe(root.spanId);
      expect(root.spanId).toMatch(/^[0-9a-f]{16}$/);
      const list = await json(fetch(`${b.url}/traces?session_id=${session}`));
      expect(list.items.map((i: any) => i.traceId)).toEqual([traceId]);
      expect(list.items[0].spans).toHaveLength(2);
    });
  }

  it('answers gzip, partialSuccess, 400, 413 and 415 as OTLP/HTTP says', async () => {
    const good = { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), name: 'ok' };
    const bad = { traceId: 'nothex', spanId: 'c'.repeat(16), name: 'bad' };
    const body = { resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ spans: [good, bad] }] }] };
    const res = await fetch(`${b.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify(body)),
    });
    expect(res.status).toBe(200);
    expect((await res.json()).partialSuccess).toMatchObject({
      rejectedSpans: 1,
      errorMessage: expect.stringContaining('traceId'),
    });

    const proto = await fetch(`${b.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf' },
      body: encodeTraceRequest({
        resourceSpans: [
          { scopeSpans: [{ spans: [{ ...good, spanId: 'd'.repeat(16), traceId: '00'.repeat(16) }] }] },
        ],
      }),
    });
    expect(proto.headers.get('content-type')).toBe('application/x-protobuf');
    expect(decodeTraceResponse(new Uint8Array(await proto.arrayBuffer())).partialSuccess).toMatchObject({
      rejectedSpans: 1,
    });

    expect((await post(`${b.url}/v1/traces`, '{nope')).status).toBe(400);
    expect((await post(`${b.url}/v1/traces`, 'x', { 'content-type': 'text/plain' })).status).toBe(415);
    const proto400 = await post(`${b.url}/v1/traces`, 'garbage', {
      'content-type': 'application/x-protobuf',
    });
    expect(proto400.status).toBe(400);
    const big = await post(`${b.url}/v1/traces`, 'x'.repeat(11 * 1024 * 1024));
    expect(big.status).toBe(413);
    // Too deep, plain and gzip (the plain body is checked once, by the app's depth limit).
    const deep = `{"resourceSpans":[${'['.repeat(5000)}${']'.repeat(5000)}]}`;
    const deepPlain = await post(`${b.url}/v1/traces`, deep);
    expect(deepPlain.status).toBe(400);
    expect((await deepPlain.json()).error.code).toBe('json_too_deep');
    const deepGzip = await fetch(`${b.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(deep),
    });
    expect(deepGzip.status).toBe(400);
    expect(JSON.stringify(await deepGzip.json())).toContain('nested more than');
  });

  it('watches spans over SSE (from-beginning overrides cursor) and purges without reusing sequences', async () => {
    const w = collect(`${b.url}/traces?watch=true&from-beginning=true&cursor=999999`);
    await w.until(3);
    expect(w.data.map((d) => JSON.parse(d).traceId)).toContain('a'.repeat(32));
    w.close();
    const last = (await json(fetch(`${b.url}/traces?limit=1000`))).nextCursor as number;
    expect((await json(fetch(`${b.url}/traces`, { method: 'DELETE' }))).deleted).toBeGreaterThan(0);
    expect((await json(fetch(`${b.url}/traces`))).total).toBe(0);
    await emit(new JsonExporter({ url: `${b.url}/v1/traces` }), 'again');
    const after = await json(fetch(`${b.url}/traces`));
    expect(after.items[0].sequence).toBeGreaterThan(last);
  });
});
