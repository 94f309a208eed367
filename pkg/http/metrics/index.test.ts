import { OpenAPIHono } from '@hono/zod-openapi';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { HttpError, notFoundHandler, renderEnvelope } from '../index.ts';
import { exposition, httpMetrics, mountMetricsRoute, type RequestInfo } from './index.ts';

function app() {
  const registry = new Registry();
  const seen: RequestInfo[] = [];
  const a = new OpenAPIHono();
  a.use('*', httpMetrics({ registry, prefix: 'test_', onRequest: (_c, info) => seen.push(info) }));
  a.onError((err, c) => renderEnvelope(c, err as HttpError));
  a.notFound(notFoundHandler);
  a.get('/items/:id', (c) => c.json({ id: c.req.param('id') }));
  a.post('/items', () => {
    throw new HttpError('conflict', 'exists');
  });
  a.get('/health', (c) => c.json({ status: 'ok' }));
  mountMetricsRoute(a, [registry]);
  return { a, registry, seen };
}

const line = (text: string, name: string, labels: string) =>
  text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));

describe('httpMetrics', () => {
  it('labels requests by route pattern, method and status, never by raw path', async () => {
    const { a, registry, seen } = app();
    for (const id of ['a', 'b', 'c']) expect((await a.request(`/items/${id}`)).status).toBe(200);
    expect((await a.request('/items', { method: 'POST' })).status).toBe(409);
    expect((await a.request('/nothing/here/42')).status).toBe(404);
    const text = await registry.metrics();
    expect(line(text, 'test_http_requests_total', 'route="/items/:id"')).toMatch(
      /method="GET",route="\/items\/:id",status="200"\} 3$/,
    );
    expect(line(text, 'test_http_requests_total', 'status="409"')).toMatch(/route="\/items".* 1$/);
    expect(line(text, 'test_http_requests_total', 'status="404"')).toMatch(/route="unmatched"/);
    expect(text).not.toContain('/items/a');
    expect(text).not.toContain('/nothing');
    expect(line(text, 'test_http_request_duration_seconds_count', 'route="/items/:id"')).toMatch(/ 3$/);
    expect(text).toMatch(/^test_http_requests_in_flight 0$/m);
    expect(seen.map((s) => s.route)).toEqual([
      '/items/:id',
      '/items/:id',
      '/items/:id',
      '/items',
      'unmatched',
    ]);
  });

  it('does not measure probes and scrapes', async () => {
    const { a, registry } = app();
    await a.request('/health');
    await a.request('/metrics');
    expect(await registry.metrics()).not.toMatch(/route="\/(health|metrics)"/);
  });

  it('serves the default process_* and nodejs_* metrics without a prefix, then the service registry', async () => {
    const { a } = app();
    await a.request('/items/x');
    const res = await a.request('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(text).toMatch(/^# TYPE process_cpu_user_seconds_total counter$/m);
    expect(text).toMatch(/^# TYPE nodejs_heap_size_total_bytes gauge$/m);
    expect(text).toMatch(/^test_http_requests_total\{/m);
    // One default set per process, however many services expose it.
    const twice = await exposition([new Registry(), new Registry()]);
    expect(twice.match(/^# TYPE process_cpu_user_seconds_total/gm)).toHaveLength(1);
  });
});
