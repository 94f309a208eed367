/**
 * OpenTelemetry the standard way, through processes: with OTEL_EXPORTER_OTLP_* set, the engine
 * (`berth controller`), `berth api` and `berth broker` export to that endpoint with its headers — a
 * real OTLP/HTTP receiver decoding what the real exporters send — and `traceparent` reaches the
 * model, the tool and the memory (the broker's own server spans join the query's trace).
 */

import { writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeModelServer, startFakeModel } from '../fixtures/fake-model.ts';
import { type FakeToolServer, startFakeTool } from '../fixtures/fake-tool.ts';
import { createNamespace } from '../support/kube.ts';
import { eventually } from '../support/wait.ts';
import {
  apply,
  killAll,
  memoryResolved,
  type Proc,
  startApi,
  startBroker,
  startController,
  tempDir,
} from './support.ts';

interface Attr {
  key: string;
  value: { stringValue?: string; intValue?: number | string };
}
interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: Attr[];
}
/** One decoded span with where and how it arrived. */
interface Received {
  service: string;
  path: string;
  headers: IncomingHttpHeaders;
  span: Span;
}

const SERVER = 2;
const TRACEPARENT = /^00-([\da-f]{32})-([\da-f]{16})-01$/;
const SECRET = 'obs-exporter-token-1234567890';
let receiver: Server;
let otlp: string;
const received: Received[] = [];
let ns: string;
let fake: FakeModelServer;
let tools: FakeToolServer;
let broker: Proc;
let controller: Proc;
let api: Proc;

/** An OTLP/HTTP JSON receiver: what the exporters of the processes send, decoded. */
async function startReceiver() {
  receiver = createServer(async (req, res) => {
    const parts: Buffer[] = [];
    for await (const p of req) parts.push(p as Buffer);
    const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as {
      resourceSpans?: Array<{ resource?: { attributes?: Attr[] }; scopeSpans?: Array<{ spans?: Span[] }> }>;
    };
    for (const rs of body.resourceSpans ?? []) {
      const service = rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
      for (const ss of rs.scopeSpans ?? [])
        for (const span of ss.spans ?? [])
          received.push({ service, path: req.url ?? '', headers: req.headers, span });
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  otlp = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
}

const attr = (s: Span, key: string) => s.attributes?.find((a) => a.key === key)?.value;
const spansOf = (service: string) => received.filter((r) => r.service === service);

async function spanWhere(pred: (r: Received) => boolean): Promise<Received> {
  await eventually(() => received.some(pred), 20_000, 50);
  return received.find(pred) as Received;
}

beforeAll(async () => {
  [ns, fake, tools] = await Promise.all([createNamespace('obs-otel'), startFakeModel(), startFakeTool()]);
  await startReceiver();
  const caFile = join(tempDir('berth-obs-ca-'), 'ca.pem');
  writeFileSync(caFile, fake.ca);
  broker = await startBroker({
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${otlp}/custom/traces`,
    OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-tenant=broker',
  });
  await apply(ns, [
    ['Memory', 'default', { address: { value: broker.url } }],
    ['Model', 'traced', { type: 'openai', model: 'traced', baseUrl: fake.url }],
    ['Tool', 'echo', { http: { url: `${tools.url}/echo`, method: 'POST' } }],
  ]);
  [controller, api] = await Promise.all([
    startController(ns, broker.url, {
      NODE_EXTRA_CA_CERTS: caFile,
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp,
      OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${SECRET},x-tenant=engine`,
    }),
    startApi(ns, broker.url, { OTEL_EXPORTER_OTLP_ENDPOINT: `${otlp}/` }),
  ]);
  await memoryResolved(ns);
});

afterAll(async () => {
  await Promise.all([api?.stop(), controller?.stop()]);
  await broker?.stop();
  await Promise.all([fake?.close(), tools?.close()]);
  receiver?.closeAllConnections();
  receiver?.close();
  killAll();
});

const chat = (model: string, headers: Record<string, string> = {}) =>
  fetch(`${api.url}/compat/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'trace me' }] }),
  });

describe('OTEL_* honoured and traceparent propagated', () => {
  it('a chat completion: API span under the caller’s traceparent, model and memory calls in the query’s trace', async () => {
    const callerTrace = 'a'.repeat(32);
    const callerSpan = 'b'.repeat(16);
    const res = await chat('model/traced', { traceparent: `00-${callerTrace}-${callerSpan}-01` });
    expect(res.status, await res.clone().text()).toBe(200);

    // The model was called with the engine's span as parent.
    const sent = fake.requests.at(-1)?.headers.traceparent;
    const [, traceId, modelParent] = TRACEPARENT.exec(String(sent)) ?? [];
    expect(traceId, String(sent)).toBeDefined();

    // The engine exported to OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces with OTEL_EXPORTER_OTLP_HEADERS.
    const root = await spanWhere(
      (r) => r.service === 'berth-controller' && r.span.name === 'query' && r.span.traceId === traceId,
    );
    expect(root.path).toBe('/v1/traces');
    expect(root.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(root.headers['x-tenant']).toBe('engine');
    const session = attr(root.span, 'svc.session.id')?.stringValue;
    expect(session).toBeTruthy();
    expect(attr(root.span, 'session.id')?.stringValue).toBe(session);
    await spanWhere((r) => r.service === 'berth-controller' && r.span.spanId === modelParent);

    // Memory calls carried it too: the broker's own server spans are in the query's trace, each the
    // child of an engine span, exported to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given.
    const memory = await spanWhere(
      (r) => r.service === 'berth-broker' && r.span.traceId === traceId && r.span.name === 'POST /messages',
    );
    expect(memory.span.kind).toBe(SERVER);
    expect(memory.path).toBe('/custom/traces');
    expect(memory.headers['x-tenant']).toBe('broker');
    expect(memory.headers.authorization).toBeUndefined();
    await spanWhere((r) => r.service === 'berth-controller' && r.span.spanId === memory.span.parentSpanId);
    expect(attr(memory.span, 'http.route')?.stringValue).toBe('/messages');

    // The API service's own span is the child of the caller's.
    const served = await spanWhere(
      (r) => r.service === 'berth-api' && r.span.name === 'POST /compat/v1/chat/completions',
    );
    expect(served.path).toBe('/v1/traces');
    expect(served.span).toMatchObject({ traceId: callerTrace, parentSpanId: callerSpan, kind: SERVER });
    expect(Number(attr(served.span, 'http.response.status_code')?.intValue)).toBe(200);
  });

  it('a tool call carries traceparent, and no span holds a credential, a path or a query string', async () => {
    const before = tools.headers.length;
    const res = await chat('tool/echo');
    expect(res.status, await res.clone().text()).toBe(200);
    expect(tools.headers.length).toBe(before + 1);
    const [, traceId, parent] = TRACEPARENT.exec(String(tools.headers.at(-1)?.traceparent)) ?? [];
    expect(traceId).toBeDefined();
    await spanWhere(
      (r) => r.service === 'berth-controller' && r.span.traceId === traceId && r.span.spanId === parent,
    );

    expect(JSON.stringify(received.map((r) => r.span))).not.toContain(SECRET);
    // Server spans name the route pattern only: no namespace, object name or query string.
    const served = [...spansOf('berth-api'), ...spansOf('berth-broker')].map((r) => r.span);
    expect(served.length).toBeGreaterThan(0);
    expect(JSON.stringify(served)).not.toContain(ns);
    expect(JSON.stringify(served)).not.toMatch(/chat-query-|\?/);
    expect(served.every((span) => attr(span, 'url.path') === undefined)).toBe(true);
    // Probes and scrapes make no spans; neither does OTLP ingest on the broker (no loop). A traced
    // request after them marks when their spans would have been exported.
    await fetch(`${api.url}/healthz`);
    await fetch(`${broker.url}/metrics`);
    const ingest = await fetch(`${broker.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"resourceSpans":[]}',
    });
    expect(ingest.status).toBe(200);
    await fetch(`${broker.url}/sessions?limit=1`);
    await spanWhere((r) => r.service === 'berth-broker' && r.span.name === 'GET /sessions');
    expect(received.filter((r) => /health|metrics|traces/.test(r.span.name))).toEqual([]);
  });
});
