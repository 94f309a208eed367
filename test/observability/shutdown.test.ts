/**
 * Graceful shutdown of `berth api` and `berth broker` processes on SIGTERM: readiness turns false
 * at once, what is in flight finishes within SHUTDOWN_GRACE_SECONDS — a streaming chat completion,
 * a query's chunk stream, a watcher — and what outlasts it ends with a final `shutting_down` error
 * frame instead of a cut connection. The model is the fake one, held open by the test.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sseData } from '../../pkg/gateway/compat/sse-reader.ts';
import { type FakeModelServer, startFakeModel } from '../fixtures/fake-model.ts';
import { createNamespace } from '../support/kube.ts';
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

let ns: string;
let fake: FakeModelServer;
let broker: Proc;
let controller: Proc;
const gates: Array<() => void> = [];

/** A promise the test resolves when it decides (no timers). */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => {
    open = r;
  });
  gates.push(open);
  return { open, opened };
}

/** The `data:` payloads of an SSE response, one at a time. */
function reader(res: Response) {
  if (!res.body) throw new Error('no body');
  const it = sseData(res.body);
  return {
    next: async () => (await it.next()).value as string | undefined,
    async rest() {
      const out: string[] = [];
      for await (const d of it) out.push(d);
      return out;
    },
  };
}

const post = (url: string, body: unknown, type = 'application/json') =>
  fetch(url, { method: 'POST', headers: { 'content-type': type }, body: JSON.stringify(body) });

const chunk = (id: string, content: string) => ({
  id,
  object: 'chat.completion.chunk',
  choices: [{ index: 0, delta: { content }, finish_reason: null }],
});

beforeAll(async () => {
  [ns, fake] = await Promise.all([createNamespace('obs-shutdown'), startFakeModel()]);
  const caFile = join(tempDir('berth-obs-ca-'), 'ca.pem');
  writeFileSync(caFile, fake.ca);
  broker = await startBroker();
  await apply(ns, [
    ['Memory', 'default', { address: { value: broker.url } }],
    ['Model', 'held', { type: 'openai', model: 'held-1', baseUrl: fake.url }],
    ['Model', 'outlasting', { type: 'openai', model: 'held-2', baseUrl: fake.url }],
  ]);
  controller = await startController(ns, broker.url, { NODE_EXTRA_CA_CERTS: caFile });
  await memoryResolved(ns);
});

afterAll(async () => {
  for (const open of gates) open();
  await controller?.stop();
  await broker?.stop();
  await fake?.close();
  killAll();
});

describe('berth api on SIGTERM', () => {
  it('turns unready, refuses new requests and lets a streaming chat completion finish', async () => {
    const api = await startApi(ns, broker.url, { SHUTDOWN_GRACE_SECONDS: '60' });
    const release = gate();
    fake.script('held-1', { reply: 'one two three', hold: release.opened });
    const sdk = new OpenAI({ baseURL: `${api.url}/compat/v1`, apiKey: 'unused', maxRetries: 0 });
    const stream = await sdk.chat.completions.create({
      model: 'model/held',
      messages: [{ role: 'user', content: 'count' }],
      stream: true,
    });
    const chunks = stream[Symbol.asyncIterator]();
    let content = '';
    while (!content) {
      const n = await chunks.next();
      if (n.done) throw new Error('the stream ended before its first content');
      content += n.value.choices[0]?.delta.content ?? '';
    }

    api.spawned.proc.kill('SIGTERM');
    await api.spawned.waitForLine(/"msg":"shutting down"/);
    const ready = await fetch(`${api.url}/readyz`);
    expect(ready.status).toBe(503);
    expect((await ready.json()).error.code).toBe('shutting_down');
    const refused = await fetch(`${api.url}/v1/namespaces/${ns}/agents`);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect((await refused.json()).error.code).toBe('shutting_down');
    // Probes and scrapes are still answered while draining.
    expect((await fetch(`${api.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${api.url}/metrics`)).status).toBe(200);

    release.open();
    let finish: string | null | undefined;
    for (let n = await chunks.next(); !n.done; n = await chunks.next()) {
      content += n.value.choices[0]?.delta.content ?? '';
      finish = n.value.choices[0]?.finish_reason ?? finish;
    }
    expect(content).toBe('one two three');
    expect(finish).toBe('stop');
    expect(await api.spawned.exited).toBe(0);
    expect(api.spawned.output()).not.toContain('grace period over');
  });

  it('ends a stream that outlasts the grace period with a final error frame and [DONE]', async () => {
    const api = await startApi(ns, broker.url, { SHUTDOWN_GRACE_SECONDS: '1' });
    fake.script('held-2', { reply: 'alpha beta gamma', hold: gate().opened });
    const res = await post(`${api.url}/compat/v1/chat/completions`, {
      model: 'model/outlasting',
      messages: [{ role: 'user', content: 'never ends' }],
      stream: true,
    });
    expect(res.status).toBe(200);
    const events = reader(res);
    expect(JSON.parse((await events.next()) ?? '{}').choices[0].delta.content).toBe('alpha ');

    api.spawned.proc.kill('SIGTERM');
    const rest = await events.rest();
    expect(rest.at(-1)).toBe('[DONE]');
    expect(JSON.parse(rest.at(-2) ?? '{}').error).toMatchObject({
      code: 'shutting_down',
      type: 'server_error',
    });
    expect(await api.spawned.exited).toBe(0);
    expect(api.spawned.output()).toContain('grace period over');
  });
});

describe('berth broker on SIGTERM', () => {
  it('turns unready, refuses new watches, keeps serving writes until its streams finish', async () => {
    const b = await startBroker({ SHUTDOWN_GRACE_SECONDS: '60' });
    const ndjson = (q: string, c: object) =>
      fetch(`${b.url}/stream/${q}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-ndjson' },
        body: `${JSON.stringify(c)}\n`,
      });
    expect((await ndjson('q-drain', chunk('c1', 'first'))).status).toBe(200);
    const query = reader(await fetch(`${b.url}/stream/q-drain?from-beginning=true`));
    expect(JSON.parse((await query.next()) ?? '{}').choices[0].delta.content).toBe('first');
    const watching = new AbortController();
    const watcher = reader(await fetch(`${b.url}/events?watch=true`, { signal: watching.signal }));

    b.spawned.proc.kill('SIGTERM');
    await b.spawned.waitForLine(/"msg":"shutting down"/);
    const ready = await fetch(`${b.url}/readyz`);
    expect(ready.status).toBe(503);
    expect((await ready.json()).error.code).toBe('shutting_down');
    const refused = await fetch(`${b.url}/sessions?watch=true`);
    expect(refused.status).toBe(503);
    expect((await refused.json()).error.code).toBe('shutting_down');

    // The writes of a query still running are served, and reach the streams that drain.
    expect(
      (await post(`${b.url}/events`, { reason: 'DuringDrain', data: { queryId: 'q-drain' } })).status,
    ).toBe(201);
    expect(JSON.parse((await watcher.next()) ?? '{}').reason).toBe('DuringDrain');
    expect((await ndjson('q-drain', chunk('c2', 'second'))).status).toBe(200);
    expect((await fetch(`${b.url}/stream/q-drain/complete`, { method: 'POST' })).status).toBe(200);
    const tail = await query.rest();
    expect(tail.map((d) => (d === '[DONE]' ? d : JSON.parse(d).choices[0].delta.content))).toEqual([
      'second',
      '[DONE]',
    ]);
    // The last watcher leaves: the broker stops without waiting out the grace period.
    watching.abort();
    expect(await b.spawned.exited).toBe(0);
    expect(b.spawned.output()).not.toContain('grace period over');
  });

  it('ends watchers that outlast the grace period with a final error frame', async () => {
    const b = await startBroker({ SHUTDOWN_GRACE_SECONDS: '1' });
    await fetch(`${b.url}/stream/q-open`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson' },
      body: `${JSON.stringify(chunk('c1', 'only'))}\n`,
    });
    const query = reader(await fetch(`${b.url}/stream/q-open?from-beginning=true`));
    expect(JSON.parse((await query.next()) ?? '{}').choices[0].delta.content).toBe('only');
    const watcher = reader(await fetch(`${b.url}/events?watch=true`));

    b.spawned.proc.kill('SIGTERM');
    const [queryTail, watcherTail] = await Promise.all([query.rest(), watcher.rest()]);
    expect(JSON.parse(queryTail[0] ?? '{}').error).toMatchObject({ code: 'shutting_down' });
    expect(queryTail.slice(1)).toEqual(['[DONE]']);
    expect(watcherTail.map((d) => JSON.parse(d).error?.code)).toEqual(['shutting_down']);
    expect(await b.spawned.exited).toBe(0);
    expect(b.spawned.output()).toContain('grace period over');
  });
});
