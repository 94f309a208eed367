/**
 * Issue 16, metrics and probes: a scripted run through `berth broker`, `berth controller` and
 * `berth api` processes (a REST call, chat completions with the demo model, broker writes, reads
 * and a watcher), then every metric family of every component is scraped and present, following
 * Prometheus conventions, and the probes answer the same way everywhere.
 */
import { connect } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNamespace } from '../support/kube.ts';
import { eventually } from '../support/wait.ts';
import {
  apply,
  conventionViolations,
  demoSetup,
  families,
  httpsGet,
  killAll,
  memoryResolved,
  type Proc,
  sample,
  scrape,
  startApi,
  startBroker,
  startController,
} from './support.ts';

let ns: string;
let broker: Proc;
let controller: Awaited<ReturnType<typeof startController>>;
let api: Proc;

beforeAll(async () => {
  ns = await createNamespace('obs-metrics');
  // Small caps so the run evicts: the eviction counter moves.
  broker = await startBroker({ BROKER_MAX_EVENTS: '5' });
  await apply(ns, demoSetup(broker.url));
  [controller, api] = await Promise.all([startController(ns, broker.url), startApi(ns, broker.url)]);
  await memoryResolved(ns);
});

afterAll(async () => {
  await Promise.all([api?.stop(), controller?.stop()]);
  await broker?.stop();
  killAll();
});

describe('the API service after a REST call and chat completions', () => {
  it('exposes requests, latency, chat completions, time to first token and auth failures', async () => {
    const created = await fetch(`${api.url}/v1/namespaces/${ns}/agents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'obs-agent', spec: { prompt: 'You help.', modelRef: { name: 'demo' } } }),
    });
    expect(created.status, await created.text()).toBe(201);
    const sdk = new OpenAI({ baseURL: `${api.url}/compat/v1`, apiKey: 'unused', maxRetries: 0 });
    const answer = await sdk.chat.completions.create({
      model: 'model/demo',
      messages: [{ role: 'user', content: 'hello metrics' }],
    });
    expect(answer.choices[0]?.message.content).toContain('[demo model]');
    let streamed = '';
    const stream = await sdk.chat.completions.create({
      model: 'model/demo',
      messages: [{ role: 'user', content: 'hello stream' }],
      stream: true,
    });
    for await (const chunk of stream) streamed += chunk.choices[0]?.delta.content ?? '';
    expect(streamed).toContain('hello stream');

    const text = await scrape(api.url);
    const types = families(text);
    for (const [name, type] of [
      ['berth_api_http_requests_total', 'counter'],
      ['berth_api_http_request_duration_seconds', 'histogram'],
      ['berth_api_http_requests_in_flight', 'gauge'],
      ['berth_api_chat_completions_total', 'counter'],
      ['berth_api_chat_completion_duration_seconds', 'histogram'],
      ['berth_api_chat_completion_time_to_first_token_seconds', 'histogram'],
      ['berth_api_auth_failures_total', 'counter'],
      ['process_cpu_user_seconds_total', 'counter'],
      ['process_resident_memory_bytes', 'gauge'],
      ['nodejs_eventloop_lag_seconds', 'gauge'],
      ['nodejs_heap_size_used_bytes', 'gauge'],
    ])
      expect(types.get(name as string), name).toBe(type);
    const agents = { route: '/v1/namespaces/:namespace/agents', method: 'POST', status: '201' };
    expect(sample(text, 'berth_api_http_requests_total', agents)).toBe(1);
    expect(sample(text, 'berth_api_http_request_duration_seconds_count', agents)).toBe(1);
    const chat = { route: '/compat/v1/chat/completions', method: 'POST', status: '200' };
    expect(sample(text, 'berth_api_http_requests_total', chat)).toBe(2);
    const ok = { target_type: 'model', outcome: 'ok' };
    expect(sample(text, 'berth_api_chat_completions_total', { ...ok, stream: 'false' })).toBe(1);
    expect(sample(text, 'berth_api_chat_completions_total', { ...ok, stream: 'true' })).toBe(1);
    expect(sample(text, 'berth_api_chat_completion_duration_seconds_count', ok)).toBe(2);
    expect(
      sample(text, 'berth_api_chat_completion_time_to_first_token_seconds_count', { target_type: 'model' }),
    ).toBe(1);
    // Without OTEL_* the engine's spans go to the broker, as before, with both session attributes.
    await eventually(async () => {
      const traces = await (await fetch(`${broker.url}/traces?limit=1000`)).text();
      return traces.includes('"svc.session.id"') && traces.includes('"session.id"');
    }, 20_000);
    // Route patterns only: no namespace or object name becomes a label value.
    expect(text).not.toContain(ns);
    expect(text).not.toContain('obs-agent');
    expect(conventionViolations(text)).toEqual([]);
  });
});

describe('the broker after writes, reads and a watcher', () => {
  it('exposes requests, per-domain reads, writes and watches, watchers, stores and backend errors', async () => {
    const before = await scrape(broker.url);
    const posts = { route: '/events', method: 'POST', status: '201' };
    const watching = new AbortController();
    const watcher = await fetch(`${broker.url}/events?watch=true`, { signal: watching.signal });
    expect(watcher.status).toBe(200);
    const watchers = async () =>
      sample(await scrape(broker.url), 'berth_broker_sse_watchers', { domain: 'events' });
    expect(await watchers()).toBe(1);
    for (let i = 0; i < 8; i++) {
      const posted = await fetch(`${broker.url}/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ reason: 'ObservabilityTest', data: { queryId: `q-${i}` } }),
      });
      expect(posted.status).toBe(201);
    }
    expect((await fetch(`${broker.url}/events?limit=2`)).status).toBe(200);
    watching.abort();
    await eventually(async () => ((await watchers()) ?? 0) === 0, 10_000);

    const text = await scrape(broker.url);
    const types = families(text);
    for (const [name, type] of [
      ['berth_broker_http_requests_total', 'counter'],
      ['berth_broker_http_request_duration_seconds', 'histogram'],
      ['berth_broker_writes_total', 'counter'],
      ['berth_broker_reads_total', 'counter'],
      ['berth_broker_watches_total', 'counter'],
      ['berth_broker_sse_watchers', 'gauge'],
      ['berth_broker_sse_slow_disconnects_total', 'counter'],
      ['berth_broker_store_items', 'gauge'],
      ['berth_broker_store_bytes', 'gauge'],
      ['berth_broker_store_evictions_total', 'counter'],
      ['berth_broker_backend_errors_total', 'counter'],
      ['process_cpu_user_seconds_total', 'counter'],
      ['nodejs_heap_size_used_bytes', 'gauge'],
    ])
      expect(types.get(name as string), name).toBe(type);
    const delta = (name: string, labels: Record<string, string>) =>
      (sample(text, name, labels) ?? 0) - (sample(before, name, labels) ?? 0);
    expect(delta('berth_broker_http_requests_total', posts)).toBe(8);
    expect(delta('berth_broker_http_request_duration_seconds_count', posts)).toBe(8);
    expect(delta('berth_broker_writes_total', { domain: 'events' })).toBe(8);
    expect(delta('berth_broker_reads_total', { domain: 'events' })).toBe(1);
    expect(sample(text, 'berth_broker_watches_total', { domain: 'events' })).toBe(1);
    // The chat completions above wrote messages (memory) and chunks, and relayed a chunk stream.
    expect(sample(text, 'berth_broker_writes_total', { domain: 'messages' })).toBeGreaterThanOrEqual(2);
    expect(sample(text, 'berth_broker_writes_total', { domain: 'chunks' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'berth_broker_watches_total', { domain: 'chunks' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'berth_broker_store_items', { domain: 'events' })).toBe(5);
    expect(sample(text, 'berth_broker_store_evictions_total', { domain: 'events' })).toBeGreaterThan(0);
    expect(sample(text, 'berth_broker_store_items', { domain: 'messages' })).toBeGreaterThanOrEqual(4);
    expect(sample(text, 'berth_broker_store_bytes', { domain: 'messages' })).toBeGreaterThan(0);
    expect(conventionViolations(text)).toEqual([]);
  });

  it('counts a watcher cut off for reading too slowly', async () => {
    // A broker with a small per-watcher buffer, and a raw socket that asks for a watch and never
    // reads: the kernel buffers fill, then the broker's, and it cuts the watcher off.
    const small = await startBroker({ SSE_MAX_BUFFERED_BYTES: '1024', BROKER_MAX_EVENTS: '5' });
    const port = new URL(small.url).port;
    const socket = connect(Number(port), '127.0.0.1');
    socket.pause();
    socket.write(`GET /events?watch=true HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    const body = JSON.stringify({ reason: 'Flood', message: 'x'.repeat(60_000), data: { queryId: 'flood' } });
    const slow = async () => sample(await scrape(small.url), 'berth_broker_sse_slow_disconnects_total') ?? 0;
    expect(await slow()).toBe(0);
    try {
      await eventually(
        async () => {
          await fetch(`${small.url}/events`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body,
          });
          return (await slow()) >= 1;
        },
        30_000,
        0,
      );
    } finally {
      socket.destroy();
      await small.stop();
    }
  });
});

describe('the controller', () => {
  it('exposes its reconcile, informer and queue metrics beside unprefixed process metrics', async () => {
    const { status, body: text } = await httpsGet(controller.metricsPort, '/metrics');
    expect(status).toBe(200);
    const types = families(text);
    for (const [name, type] of [
      ['berth_controller_reconcile_total', 'counter'],
      ['berth_controller_reconcile_errors_total', 'counter'],
      ['berth_controller_reconcile_panics_total', 'counter'],
      ['berth_controller_reconcile_duration_seconds', 'histogram'],
      ['berth_controller_query_purge_seconds', 'histogram'],
      ['berth_controller_workqueue_depth', 'gauge'],
      ['berth_controller_informer_last_event_age_seconds', 'gauge'],
      ['berth_controller_informer_restarts_total', 'counter'],
      ['berth_controller_leader', 'gauge'],
      ['berth_controller_queries_running', 'gauge'],
      ['berth_controller_engine_events_total', 'counter'],
      ['berth_controller_engine_events_pending', 'gauge'],
      ['process_cpu_user_seconds_total', 'counter'],
      ['nodejs_eventloop_lag_seconds', 'gauge'],
    ])
      expect(types.get(name as string), name).toBe(type);
    expect(
      sample(text, 'berth_controller_reconcile_total', { controller: 'query', result: 'success' }),
    ).toBeGreaterThan(0);
    expect(sample(text, 'berth_controller_informer_restarts_total', { resource: 'queries' })).toBe(0);
    // The scripted run's queries sent their events to the broker; none dropped or given up.
    expect(sample(text, 'berth_controller_engine_events_total', { outcome: 'sent' })).toBeGreaterThan(0);
    expect(sample(text, 'berth_controller_engine_events_total', { outcome: 'dropped' })).toBe(0);
    expect(sample(text, 'berth_controller_engine_events_total', { outcome: 'failed' })).toBe(0);
    expect(text).not.toMatch(/^berth_controller_(process|nodejs)_/m);
    expect(conventionViolations(text)).toEqual([]);
  });
});

describe('probes', () => {
  it('answer /health, /healthz and /readyz the same way on every component', async () => {
    for (const base of [api.url, broker.url, controller.url])
      for (const path of ['/health', '/healthz', '/readyz']) {
        const res = await fetch(`${base}${path}`);
        expect(res.status, `${base}${path}`).toBe(200);
        expect((await res.json()).status).toBe(path === '/readyz' ? 'ready' : 'ok');
      }
  });
});
