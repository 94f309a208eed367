/**
 * A Query's broker data goes to its namespace's broker (issue 27 item 2), with that broker's
 * credential only: chunks, events, traces and memory calls are recorded by two brokers standing in
 * for a tenant's own and the shared one, and each request's Authorization is checked. A Memory
 * that names another broker gets no credential. (End to end with real brokers and real tokens:
 * test/security/tenant-isolation.test.ts.)
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANNOTATION_STREAMING, type Query } from '../../pkg/api/index.ts';
import type { BrokerRoute, BrokerRouter } from '../../pkg/engine/brokers.ts';
import { createQueryEngine } from '../../pkg/engine/index.ts';
import { createLogger } from '../../pkg/log/index.ts';
import { type FakeModelServer, startFakeModel } from '../fixtures/fake-model.ts';
import { agent, MapLookup, memory, model, NS, query, run } from './support.ts';

interface Seen {
  method: string;
  path: string;
  auth: string | undefined;
  body: string;
}

/** Answers the broker's write side just enough for the engine, recording every request. */
async function recordingBroker(): Promise<{ url: string; seen: Seen[]; server: http.Server }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '';
      seen.push({
        method: req.method ?? '',
        path,
        auth: req.headers.authorization,
        body: Buffer.concat(chunks).toString(),
      });
      const json = (status: number, body: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.method === 'POST' && path === '/conversations') return json(201, { conversation_id: 'c-1' });
      if (req.method === 'GET' && path.startsWith('/messages')) return json(200, { messages: [], total: 0 });
      return json(path.startsWith('/v1/traces') ? 200 : 201, {});
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server };
}

let fake: FakeModelServer;
let own: Awaited<ReturnType<typeof recordingBroker>>;
let shared: Awaited<ReturnType<typeof recordingBroker>>;
const OTHER = 'engine-test-other';

beforeAll(async () => {
  fake = await startFakeModel();
  own = await recordingBroker();
  shared = await recordingBroker();
});
afterAll(async () => {
  await fake.close();
  for (const s of [own, shared]) s.server.close();
});

/** NS has a broker of its own; every other namespace shares the broker of `berth-system`. */
const router: BrokerRouter = {
  async route(namespace): Promise<BrokerRoute> {
    return namespace === NS
      ? { url: own.url, namespace: NS, headers: () => ({ authorization: 'Bearer tok-own' }) }
      : {
          url: shared.url,
          namespace: 'berth-system',
          headers: () => ({ authorization: 'Bearer tok-shared' }),
        };
  },
};

function inNamespace<T extends { metadata: { namespace?: string } }>(o: T, namespace: string): T {
  return { ...o, metadata: { ...o.metadata, namespace } };
}

function engineFor(lookup: MapLookup) {
  return createQueryEngine({
    lookup,
    brokers: router,
    ca: fake.ca,
    maxRetries: 0,
    env: {},
    logger: createLogger({ level: 'silent' }),
  });
}

const streaming = { annotations: { [ANNOTATION_STREAMING]: 'true' } };
const summary = (seen: Seen[]) => seen.map((s) => `${s.method} ${s.path.split('?')[0]} ${s.auth ?? '-'}`);

describe("a query's data goes to its namespace's broker, with that broker's credential only", () => {
  it('a namespace with its own broker: chunks, events, traces and memory there, keyed by the bare name', async () => {
    const lookup = new MapLookup()
      .put('model', model('default', { baseUrl: fake.url }))
      .put('agent', agent('helper', { modelRef: { name: 'default' } }))
      .put('memory', memory('default', own.url));
    fake.script('default', { reply: 'routed hello' });
    own.seen.length = 0;
    shared.seen.length = 0;
    const engine = engineFor(lookup);
    const q = query({ type: 'agent', name: 'helper' }, 'hello?', { ...streaming, name: 'support-1' });
    expect((await engine.run(q, run())).phase).toBe('done');
    await engine.flush();
    await engine.close();
    const got = summary(own.seen);
    for (const line of [
      'POST /conversations Bearer tok-own',
      'POST /messages Bearer tok-own',
      'POST /stream/support-1 Bearer tok-own',
      'POST /stream/support-1/complete Bearer tok-own',
      'POST /events Bearer tok-own',
      'POST /v1/traces Bearer tok-own',
    ])
      expect(got).toContain(line);
    const stored = own.seen.find((s) => s.path === '/messages' && s.method === 'POST');
    expect(JSON.parse(stored?.body ?? '{}').query_id).toBe('support-1');
    const events = own.seen.filter((s) => s.path === '/events').flatMap((s) => [JSON.parse(s.body)].flat());
    expect(new Set(events.map((e: { data: { queryId: string } }) => e.data.queryId))).toEqual(
      new Set(['support-1']),
    );
    expect(shared.seen).toEqual([]);
  });

  it('a namespace without one: the shared broker, with its credential; a Memory naming another broker gets none', async () => {
    const lookup = new MapLookup()
      .put('model', inNamespace(model('default', { baseUrl: fake.url }), OTHER))
      .put('agent', inNamespace(agent('helper', { modelRef: { name: 'default' } }), OTHER))
      // This namespace's Memory names NS's broker: a third party from its point of view.
      .put('memory', inNamespace(memory('default', own.url), OTHER));
    fake.script('default', { reply: 'shared hello' });
    own.seen.length = 0;
    shared.seen.length = 0;
    const engine = engineFor(lookup);
    const q = inNamespace(
      query({ type: 'agent', name: 'helper' }, 'hello?', { ...streaming, name: 'support-1' }),
      OTHER,
    ) as Query;
    expect((await engine.run(q, run())).phase).toBe('done');
    await engine.flush();
    await engine.close();
    const key = 'support-1';
    const got = summary(shared.seen);
    for (const line of [
      `POST /stream/${key} Bearer tok-shared`,
      `POST /stream/${key}/complete Bearer tok-shared`,
      'POST /events Bearer tok-shared',
      'POST /v1/traces Bearer tok-shared',
    ])
      expect(got).toContain(line);
    const events = shared.seen
      .filter((s) => s.path === '/events')
      .flatMap((s) => [JSON.parse(s.body)].flat());
    // The query id is its name (the wire convention); its namespace rides along for scoped purges.
    const ids = events.map(
      (e: { data: { queryId: string; queryNamespace: string } }) =>
        `${e.data.queryNamespace}/${e.data.queryId}`,
    );
    expect(new Set(ids)).toEqual(new Set([`${OTHER}/support-1`]));
    // The memory calls went to NS's broker without any credential.
    expect(summary(own.seen)).toEqual(['POST /conversations -', 'POST /messages -']);
    const stored = own.seen.find((s) => s.path === '/messages' && s.method === 'POST');
    expect(JSON.parse(stored?.body ?? '{}').query_id).toBe('support-1');
  });
});

describe('a namespace pointing its broker at another namespace’s broker', () => {
  it("sends its events and spans with its own credential, never through the other's queue", async () => {
    const THIRD = 'engine-test-third';
    // Both namespaces' routes name the same broker; each has its own credential.
    const sameUrl: BrokerRouter = {
      async route(namespace): Promise<BrokerRoute> {
        const token = namespace === NS ? 'tok-own' : 'tok-third';
        return { url: own.url, namespace, headers: () => ({ authorization: `Bearer ${token}` }) };
      },
    };
    const lookup = new MapLookup()
      .put('model', model('default', { baseUrl: fake.url }))
      .put('agent', agent('helper', { modelRef: { name: 'default' } }))
      .put('model', inNamespace(model('default', { baseUrl: fake.url }), THIRD))
      .put('agent', inNamespace(agent('helper', { modelRef: { name: 'default' } }), THIRD));
    fake.script('default', { reply: 'hello' });
    own.seen.length = 0;
    const engine = createQueryEngine({
      lookup,
      brokers: sameUrl,
      ca: fake.ca,
      maxRetries: 0,
      env: {},
      logger: createLogger({ level: 'silent' }),
    });
    const mine = query({ type: 'agent', name: 'helper' }, 'hi', { name: 'mine' });
    const theirs = inNamespace(
      query({ type: 'agent', name: 'helper' }, 'hi', { name: 'theirs' }),
      THIRD,
    ) as Query;
    expect((await engine.run(mine, run())).phase).toBe('done');
    expect((await engine.run(theirs, run())).phase).toBe('done');
    await engine.flush();
    await engine.close();
    const tokenOf = new Map<string, Set<string>>();
    for (const s of own.seen.filter((x) => x.path === '/events')) {
      for (const e of [JSON.parse(s.body)].flat() as Array<{ data: { queryNamespace: string } }>) {
        const set = tokenOf.get(e.data.queryNamespace) ?? new Set();
        set.add(s.auth ?? '-');
        tokenOf.set(e.data.queryNamespace, set);
      }
    }
    expect(tokenOf).toEqual(
      new Map([
        [NS, new Set(['Bearer tok-own'])],
        [THIRD, new Set(['Bearer tok-third'])],
      ]),
    );
    const traceAuth = new Set(own.seen.filter((x) => x.path === '/v1/traces').map((x) => x.auth));
    expect(traceAuth).toEqual(new Set(['Bearer tok-own', 'Bearer tok-third']));
  });
});
