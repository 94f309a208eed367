/**
 * Hostile upstreams (issue 26 items 3 and 5): real HTTP(S) servers that answer forever, answer
 * megabytes of error, or redirect a call carrying a Secret to another origin. The engine runs in
 * this process (as in a controller) with its real HTTP client; every case asserts the query ends in
 * error within its timeout with a short message, that this process's memory stays bounded, and
 * that a Secret's value never reaches a second origin. One case goes through the controller on the
 * real API server: the Query's status.message stays small.
 */
import {
  createServer as createHttp,
  type IncomingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttps } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ANNOTATION_STREAMING,
  API_VERSION,
  Kinds,
  type Memory,
  type Model,
  type Query,
  type Tool,
} from '../../pkg/api/index.ts';
import { callEvaluator } from '../../pkg/controller/evaluation/call.ts';
import { createHttpClient } from '../../pkg/engine/http.ts';
import { type BerthQueryEngine, createQueryEngine, type ResourceLookup } from '../../pkg/engine/index.ts';
import { createLogger } from '../../pkg/log/index.ts';
import { type Platform, startPlatform } from '../compat/platform.ts';
import { generateTestPki } from '../fixtures/test-ca.ts';
import { eventually } from '../support/wait.ts';

const NS = 'upstreams';
const MODEL_KEY = `sk-upstream-${crypto.randomUUID()}`;
const TOOL_KEY = `tool-key-${crypto.randomUUID()}`;
const MEMORY_KEY = `memory-key-${crypto.randomUUID()}`;
// Formats no redaction pattern knows: only the engine's memory of what it sent can hide them.
const OPAQUE_KEY = `opaque-${crypto.randomUUID()}`;
const OPAQUE_HEADER = `hdr-${crypto.randomUUID()}`;
const SECRET_VALUES = [MODEL_KEY, TOOL_KEY, MEMORY_KEY, OPAQUE_KEY, OPAQUE_HEADER];
const MB = 1024 * 1024;
/**
 * The most this process may grow while one hostile query runs. The model cap is 16 MiB and the SDK
 * makes three attempts, whose buffers the GC may not have reclaimed yet; without the caps the same
 * cases grow by hundreds of MB (the servers write 64 MB/s until the timeout).
 */
const RSS_BOUND = 100 * MB;

/** Writes `chunk` until the client goes away: 64 KiB per millisecond at most, with backpressure. */
function endless(res: ServerResponse, chunk: Buffer) {
  res.on('error', () => {});
  const pump = () => {
    if (res.destroyed) return;
    if (res.write(chunk)) setTimeout(pump, 1);
    else res.once('drain', pump);
  };
  pump();
}

interface Recorder {
  server: Server;
  url: string;
  seen: Array<{ path: string; headers: IncomingHttpHeaders }>;
}

async function listen(server: Server, scheme: 'http' | 'https', seen: Recorder['seen']): Promise<Recorder> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, seen, url: `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const block = Buffer.alloc(64 * 1024, 'x');
const sseChunk = Buffer.from(
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'x'.repeat(200) } }] })}\n\n`.repeat(
    64,
  ),
);
const hugeError = Buffer.from(
  JSON.stringify({ error: { message: 'upstream-failure 0123456789 '.repeat(80_000), type: 'server_error' } }),
);

let elsewhere: Recorder; // a second origin: must never see a Secret
let plain: Recorder; // http: the downgrade target, and the second origin of tools and memories
let model: Recorder; // https: the hostile model
let upstream: Recorder; // http: the hostile tool, memory and evaluator
let sink: Recorder; // the broker's stand-in (chunks, events, spans), reads and drops everything
let engine: BerthQueryEngine;
let ca: string;

const meta = (name: string) => ({ name, namespace: NS, uid: `uid-${name}` });
const models = new Map<string, Model>();
const tools = new Map<string, Tool>();
const memories = new Map<string, Memory>();
const secrets: Record<string, string> = {
  'model-key': MODEL_KEY,
  'tool-key': TOOL_KEY,
  'memory-key': MEMORY_KEY,
  'opaque-key': OPAQUE_KEY,
  'opaque-header': OPAQUE_HEADER,
};
/** The engine's view of the cluster: these objects, and Secrets that opted in. */
const lookup: ResourceLookup = {
  agent: () => undefined,
  team: () => undefined,
  model: (_ns, name) => models.get(name),
  tool: (_ns, name) => tools.get(name),
  memory: (_ns, name) => memories.get(name),
  secretValue: (_ns, name, key) => (key === 'token' ? secrets[name] : undefined),
};

beforeAll(async () => {
  const pki = await generateTestPki();
  ca = pki.ca;
  const record = (seen: Recorder['seen']) => (req: { url?: string; headers: IncomingHttpHeaders }) =>
    seen.push({ path: req.url ?? '', headers: req.headers });
  const completion = JSON.stringify({
    id: 'ok',
    object: 'chat.completion',
    created: 1,
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
  });

  const elsewhereSeen: Recorder['seen'] = [];
  elsewhere = await listen(
    createHttps({ key: pki.key, cert: pki.cert }, (req, res) => {
      record(elsewhereSeen)(req);
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' }).end(completion);
    }),
    'https',
    elsewhereSeen,
  );
  const plainSeen: Recorder['seen'] = [];
  plain = await listen(
    createHttp((req, res) => {
      record(plainSeen)(req);
      req.resume();
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end('{"messages":[],"total":0,"conversation_id":"c"}');
    }),
    'http',
    plainSeen,
  );
  const modelSeen: Recorder['seen'] = [];
  model = await listen(
    createHttps({ key: pki.key, cert: pki.cert }, (req, res) => {
      record(modelSeen)(req);
      const parts: Buffer[] = [];
      req.on('data', (p: Buffer) => parts.push(p));
      req.on('end', () => {
        const name = (JSON.parse(Buffer.concat(parts).toString() || '{}') as { model?: string }).model;
        const fast = { 'retry-after-ms': '1' };
        if (name === 'huge-error')
          res.writeHead(500, { 'content-type': 'application/json', ...fast }).end(hugeError);
        else if (name === 'endless-error') {
          res.writeHead(500, { 'content-type': 'application/json', ...fast });
          endless(res, block);
        } else if (name === 'endless-answer') {
          res.writeHead(200, { 'content-type': 'application/json' });
          endless(res, block);
        } else if (name === 'endless-stream') {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          endless(res, sseChunk);
        } else if (name === 'redirect-away')
          res.writeHead(307, { location: `${elsewhere.url}/v1/chat/completions` }).end();
        else if (name === 'echo-key')
          // As OpenAI answers a wrong key: quoting what it was sent.
          res.writeHead(401, { 'content-type': 'application/json' }).end(
            JSON.stringify({
              error: {
                message: `Incorrect API key provided: ${req.headers.authorization}; header ${req.headers['x-org']}`,
                type: 'invalid_request_error',
              },
            }),
          );
        else if (name === 'downgrade')
          res.writeHead(307, { location: `${plain.url}/v1/chat/completions` }).end();
        else res.writeHead(200, { 'content-type': 'application/json' }).end(completion);
      });
    }),
    'https',
    modelSeen,
  );
  const upstreamSeen: Recorder['seen'] = [];
  upstream = await listen(
    createHttp((req, res) => {
      record(upstreamSeen)(req);
      req.resume();
      const path = req.url ?? '';
      if (path.startsWith('/endless')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        endless(res, block);
      } else if (path.startsWith('/redirect'))
        res.writeHead(307, { location: `${plain.url}${path.replace('/redirect', '/landed')}` }).end();
      else res.writeHead(404).end();
    }),
    'http',
    upstreamSeen,
  );
  sink = await listen(
    createHttp((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    }),
    'http',
    [],
  );

  const baseUrl = `${model.url}/v1`;
  for (const name of [
    'huge-error',
    'endless-error',
    'endless-answer',
    'endless-stream',
    'redirect-away',
    'downgrade',
  ])
    models.set(name, {
      apiVersion: API_VERSION,
      kind: 'Model',
      metadata: meta(name),
      spec: {
        type: 'openai',
        model: name,
        baseUrl,
        apiKey: { secretKeyRef: { name: 'model-key', key: 'token' } },
      },
    });
  models.set('echo-key', {
    apiVersion: API_VERSION,
    kind: 'Model',
    metadata: meta('echo-key'),
    spec: {
      type: 'openai',
      model: 'echo-key',
      baseUrl,
      apiKey: { secretKeyRef: { name: 'opaque-key', key: 'token' } },
      headers: [{ name: 'x-org', valueFrom: { secretKeyRef: { name: 'opaque-header', key: 'token' } } }],
    },
  });
  const headers = [
    { name: 'x-api-key', valueFrom: { secretKeyRef: { name: 'tool-key', key: 'token' } } },
    { name: 'x-tenant', value: 'literal-but-configured' },
  ];
  for (const [name, path, timeout] of [
    ['endless', '/endless', '3s'],
    ['redirecting', '/redirect/tool', '3s'],
  ] as const)
    tools.set(name, {
      apiVersion: API_VERSION,
      kind: 'Tool',
      metadata: meta(name),
      spec: { type: 'http', http: { url: `${upstream.url}${path}`, method: 'POST', timeout, headers } },
    });
  for (const [name, path] of [
    ['endless', '/endless'],
    ['redirecting', '/redirect'],
  ] as const)
    memories.set(name, {
      apiVersion: API_VERSION,
      kind: 'Memory',
      metadata: meta(name),
      spec: {
        address: { value: `${upstream.url}${path}` },
        headers: [
          { name: 'x-memory-token', valueFrom: { secretKeyRef: { name: 'memory-key', key: 'token' } } },
        ],
      },
      status: { phase: 'ready', lastResolvedAddress: `${upstream.url}${path}` },
    });
  engine = createQueryEngine({ lookup, brokerUrl: sink.url, ca, logger: createLogger({ level: 'silent' }) });
}, 60_000);

afterAll(async () => {
  await engine?.close();
  for (const r of [elsewhere, plain, model, upstream, sink]) {
    r?.server.closeAllConnections();
    r?.server.close();
  }
});

let n = 0;
function query(
  target: Query['spec']['target'],
  extra: Partial<Query['spec']> & { streaming?: boolean } = {},
): Query {
  const { streaming, ...spec } = extra;
  return {
    apiVersion: API_VERSION,
    kind: 'Query',
    metadata: {
      ...meta(`q-${process.pid}-${++n}`),
      annotations: streaming ? { [ANNOTATION_STREAMING]: 'true' } : undefined,
    },
    spec: { input: 'hello', target, ttl: '720h', timeout: '10s', cancel: false, ...spec },
  };
}

/** Runs `fn` while sampling this process's RSS; resolves with its result, the time and the growth. */
async function measured<T>(fn: () => Promise<T>): Promise<{ out: T; ms: number; grewMb: number }> {
  const before = process.memoryUsage().rss;
  let peak = before;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 10);
  const t = performance.now();
  try {
    const out = await fn();
    peak = Math.max(peak, process.memoryUsage().rss);
    return { out, ms: performance.now() - t, grewMb: (peak - before) / MB };
  } finally {
    clearInterval(timer);
  }
}

/** An error outcome within `withinMs`, with a short message matching `why`, and bounded memory. */
async function expectBoundedError(q: Query, withinMs: number, why: RegExp) {
  const { out, ms, grewMb } = await measured(() => engine.run(q, { signal: new AbortController().signal }));
  expect(out.phase, JSON.stringify(out).slice(0, 300)).toBe('error');
  const message = (out as { message: string }).message;
  expect(message).toMatch(why);
  expect(message.length).toBeLessThanOrEqual(1024);
  expect(ms).toBeLessThan(withinMs);
  expect(grewMb, `RSS grew ${grewMb.toFixed(1)} MB`).toBeLessThan(RSS_BOUND / MB);
  for (const v of SECRET_VALUES) expect(message).not.toContain(v);
  return message;
}

describe('answers that never end', () => {
  it('an endless tool answer ends the query in error within the tool timeout, memory bounded', async () => {
    await expectBoundedError(
      query({ type: 'tool', name: 'endless' }),
      3_000,
      /Tool endless: .*larger than 1 MiB/,
    );
  });

  it('an endless model answer, error body and event stream each end the query, memory bounded', async () => {
    await expectBoundedError(query({ type: 'model', name: 'endless-answer' }), 10_000, /larger than 16 MiB/);
    await expectBoundedError(
      query({ type: 'model', name: 'endless-error' }),
      10_000,
      /Model endless-error .*HTTP 500/,
    );
    await expectBoundedError(
      query({ type: 'model', name: 'endless-stream' }, { streaming: true }),
      10_000,
      /larger than 16 MiB/,
    );
  });

  it('an endless memory answer ends the query in error, memory bounded', async () => {
    await expectBoundedError(
      query({ type: 'tool', name: 'endless' }, { memory: { name: 'endless' }, conversationId: 'c1' }),
      10_000,
      /Memory endless: GET \/messages: the memory answer is larger than 8 MiB/,
    );
  });

  it('an endless evaluator answer ends the evaluation attempt, not retried, memory bounded', async () => {
    const http = createHttpClient();
    try {
      const { out, grewMb } = await measured(() =>
        callEvaluator({
          fetch: http.fetch,
          url: `${upstream.url}/endless/evaluate`,
          body: { type: 'direct', input: 'i', output: 'o' },
          signal: new AbortController().signal,
          deadline: Date.now() + 10_000,
          timeoutText: '10s',
          retryInitialMs: 10,
          retryMaxMs: 20,
        }).catch((e: unknown) => e as Error),
      );
      expect((out as Error).message).toBe(
        'evaluator call failed: the evaluator answer is larger than 1 MiB (ENGINE_MAX_EVALUATOR_ANSWER_BYTES); it was not read further',
      );
      expect(grewMb).toBeLessThan(RSS_BOUND / MB);
    } finally {
      await http.close();
    }
  });
});

describe('an upstream quoting the credentials it was sent', () => {
  it('never puts them into the outcome: status message, events, stream error', async () => {
    const q = query({ type: 'model', name: 'echo-key' }, { streaming: true });
    const out = await engine.run(q, { signal: new AbortController().signal });
    expect(out.phase).toBe('error');
    const message = (out as { message: string }).message;
    // The model did see the values (the test is not vacuous), and said them back ...
    expect(model.seen.some((r) => r.headers.authorization === `Bearer ${OPAQUE_KEY}`)).toBe(true);
    expect(message).toMatch(/Incorrect API key provided: Bearer \[REDACTED\]; header \[REDACTED\]/);
    // ... and neither reaches what readers of the namespace see.
    for (const v of SECRET_VALUES) expect(message).not.toContain(v);
  });
});

describe('a model answering a 2 MB error body', () => {
  it('does not hold megabytes per query: ten at once end in error with short messages', async () => {
    const { out, grewMb } = await measured(() =>
      Promise.all(
        Array.from({ length: 10 }, () =>
          engine.run(query({ type: 'model', name: 'huge-error' }), { signal: new AbortController().signal }),
        ),
      ),
    );
    for (const o of out) {
      expect(o.phase).toBe('error');
      expect((o as { message: string }).message).toMatch(
        /^Model huge-error \(.*\): HTTP 500: 500 .*upstream-failure 0123456789/,
      );
      expect((o as { message: string }).message.length).toBeLessThanOrEqual(1024);
    }
    expect(grewMb, `RSS grew ${grewMb.toFixed(1)} MB`).toBeLessThan(32);
  });
});

describe('redirects never carry a Secret to another origin', () => {
  it('a model redirecting to another origin (another port): refused, the key never arrives there', async () => {
    const before = elsewhere.seen.length;
    await expectBoundedError(
      query({ type: 'model', name: 'redirect-away' }),
      10_000,
      /redirect from https:\/\/127\.0\.0\.1:\d+ to https:\/\/127\.0\.0\.1:\d+ refused/,
    );
    expect(elsewhere.seen.length).toBe(before);
    expect(model.seen.some((s) => s.headers.authorization === `Bearer ${MODEL_KEY}`)).toBe(true);
  });

  it('an https model redirecting to http fails the query saying so; the http server hears nothing', async () => {
    const before = plain.seen.length;
    await expectBoundedError(
      query({ type: 'model', name: 'downgrade' }),
      10_000,
      /never goes from https to http/,
    );
    expect(plain.seen.length).toBe(before);
  });

  it('a tool redirecting to another origin: followed without any header the Tool configured', async () => {
    const before = plain.seen.length;
    const out = await engine.run(query({ type: 'tool', name: 'redirecting' }), {
      signal: new AbortController().signal,
    });
    expect(out.phase).toBe('done');
    const landed = plain.seen.slice(before);
    expect(landed.map((s) => s.path)).toEqual(['/landed/tool']);
    expect(landed[0]?.headers['x-api-key']).toBeUndefined();
    expect(landed[0]?.headers['x-tenant']).toBeUndefined();
    expect(JSON.stringify(landed)).not.toContain(TOOL_KEY);
    // The first origin did get them: the header was configured and sent where it was meant to go.
    expect(upstream.seen.some((s) => s.headers['x-api-key'] === TOOL_KEY)).toBe(true);
  });

  it('a memory redirecting to another origin: its Secret header stays behind', async () => {
    const before = plain.seen.length;
    await engine.run(query({ type: 'tool', name: 'redirecting' }, { memory: { name: 'redirecting' } }), {
      signal: new AbortController().signal,
    });
    const landed = plain.seen.slice(before).filter((s) => s.path.startsWith('/landed/conversations'));
    expect(landed).toHaveLength(1);
    expect(landed[0]?.headers['x-memory-token']).toBeUndefined();
    expect(JSON.stringify(plain.seen)).not.toContain(MEMORY_KEY);
    expect(JSON.stringify(elsewhere.seen)).not.toMatch(new RegExp(SECRET_VALUES.join('|')));
  });
});

describe('through the controller', () => {
  let p: Platform;
  beforeAll(async () => {
    p = await startPlatform('sec-upstreams');
    p.fake.script('huge-error', { fail: { status: 500, times: 1_000, bodyBytes: 2 * MB } });
  }, 120_000);
  afterAll(() => p?.stop());

  it('a Query against a model answering 2 MB errors ends in error with a short status.message', async () => {
    const obj = (kind: string, name: string, spec: Record<string, unknown>) =>
      ({ apiVersion: API_VERSION, kind, metadata: { name, namespace: p.ns }, spec }) as KubernetesObject;
    await p.apply(obj('Model', 'huge-error', { type: 'openai', model: 'huge-error', baseUrl: p.fake.url }));
    await p.apply(obj('Query', 'hostile', { input: 'hi', target: { type: 'model', name: 'huge-error' } }));
    let status: Query['status'];
    await eventually(async () => {
      status = p.cache.get(Kinds.Query, p.ns, 'hostile')?.status;
      return status?.phase === 'error';
    }, 30_000);
    expect(status?.message).toMatch(
      /^Model huge-error \(.*\): HTTP 500: 500 .*scripted failure 1 padding padding/,
    );
    expect(status?.message?.length).toBeLessThanOrEqual(1024);
  }, 60_000);
});
