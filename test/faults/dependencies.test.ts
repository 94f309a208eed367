/**
 * The model endpoint failing, hanging, slow or gone, and the Memory backend down during a query
 * (issue 18 item 1), as a chat client sees them through /compat/v1 (the official SDK) and as the
 * Query records them: what status, which error, whether the SDK may retry. The platform runs as
 * `berth up` wires it (test/compat/platform.ts); the model is the fake one over real HTTPS.
 */
import { createServer } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_VERSION, Kinds, type Memory, type Query } from '../../pkg/api/index.ts';
import { createLogger } from '../../pkg/log/index.ts';
import { type Platform, startPlatform } from '../compat/platform.ts';
import { eventually } from '../support/wait.ts';

let p: Platform;
let sdk: OpenAI;
let hurried: OpenAI;
const hi = [{ role: 'user' as const, content: 'hi' }];

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

const obj = (kind: string, name: string, spec: Record<string, unknown>) =>
  ({ apiVersion: API_VERSION, kind, metadata: { name, namespace: p.ns }, spec }) as never;

beforeAll(async () => {
  // Quiet: the failures below are logged as warnings by design.
  p = await startPlatform('fault-deps', { logger: createLogger({ level: 'error' }) });
  sdk = new OpenAI({ baseURL: `${p.api.url}/compat/v1`, apiKey: 'unused', maxRetries: 0 });
  hurried = new OpenAI({
    baseURL: `${(await p.startApi({ waitTimeoutMs: 1000 })).url}/compat/v1`,
    apiKey: 'unused',
    maxRetries: 0,
  });
  p.fake.script('broken-model', { fail: { status: 503, times: 1_000_000 } });
  p.fake.script('slow-model', { delayMs: 1200, reply: 'slowly' });
  // Hanging: headers never come (for the length of the test).
  p.fake.script('hang-model', { delayMs: 600_000 });
  const gone = await closedPort();
  await p.apply(obj('Model', 'hang-model', { type: 'openai', model: 'hang-model', baseUrl: p.fake.url }));
  await p.apply(
    obj('Model', 'gone-model', { type: 'openai', model: 'x', baseUrl: `https://127.0.0.1:${gone}/v1` }),
  );
  await p.apply(obj('Agent', 'hangs', { prompt: 'p', modelRef: { name: 'hang-model' } }));
  await p.apply(obj('Agent', 'gone', { prompt: 'p', modelRef: { name: 'gone-model' } }));
}, 120_000);
afterAll(async () => {
  await p?.stop();
});

async function failure(promise: Promise<unknown>) {
  const err = (await promise.then(
    () => undefined,
    (e: unknown) => e,
  )) as InstanceType<typeof OpenAI.APIError>;
  expect(err).toBeInstanceOf(OpenAI.APIError);
  return {
    status: err.status,
    code: err.code,
    retry: err.headers?.get('x-should-retry'),
    message: err.message,
  };
}

const queryOf = async (agent: string, phase: (q: Query) => boolean) => {
  const q = ((p.cache.list(Kinds.Query, p.ns) ?? []) as Query[]).find((x) => x.spec.target.name === agent);
  expect(q, `a Query for ${agent}`).toBeDefined();
  return (await p.cache.waitFor(
    Kinds.Query,
    p.ns,
    q?.metadata.name as string,
    (o) => !!o && phase(o as Query),
    {
      timeoutMs: 20_000,
    },
  )) as Query;
};

describe('the model endpoint', () => {
  it('failing (503 on every call): a 502 model_error naming the model and the status, not retried', async () => {
    const seen = await failure(sdk.chat.completions.create({ model: 'agent/broken', messages: hi }));
    expect(seen).toMatchObject({ status: 502, code: 'model_error', retry: 'false' });
    expect(seen.message).toMatch(/Model broken-model .*HTTP 503/);
    const q = await queryOf('broken', (q) => q.status?.phase === 'error');
    expect(q.status?.message).toMatch(/HTTP 503/);
    expect(q.status?.conditions?.[0]).toMatchObject({ type: 'Completed', reason: 'ModelError' });
  });

  it('gone (connection refused): a 502 model_error with the network reason', async () => {
    const seen = await failure(sdk.chat.completions.create({ model: 'agent/gone', messages: hi }));
    expect(seen).toMatchObject({ status: 502, code: 'model_error' });
    expect(seen.message).toMatch(/gone-model/);
  });

  it('slow (1.2 s): answered, only later', async () => {
    const start = Date.now();
    const done = await sdk.chat.completions.create({ model: 'agent/slow', messages: hi });
    expect(done.choices[0]?.message.content).toBe('slowly');
    expect(Date.now() - start).toBeGreaterThanOrEqual(1200);
  });

  it('hanging: the client gets a 504 after its wait; the Query ends at its own timeout, named', async () => {
    const seen = await failure(hurried.chat.completions.create({ model: 'agent/hangs', messages: hi }));
    expect(seen).toMatchObject({ status: 504, code: 'timeout', retry: 'false' });
    // The same hang under a Query with spec.timeout: an error naming the timeout, the call aborted.
    await p.apply(
      obj('Query', 'hang-bounded', { input: 'hi', target: { type: 'agent', name: 'hangs' }, timeout: '2s' }),
    );
    const q = (await p.cache.waitFor(
      Kinds.Query,
      p.ns,
      'hang-bounded',
      (o) => (o as Query | undefined)?.status?.phase === 'error',
      {
        timeoutMs: 20_000,
      },
    )) as Query;
    expect(q.status?.message).toMatch(/tim(ed|e) ?out|2s/i);
    expect(q.status?.conditions?.[0]).toMatchObject({ type: 'Completed', reason: 'Timeout' });
    // The model sees the call go away (its socket closes a moment after the Query's status is written).
    await eventually(
      () => p.fake.requests.some((r) => r.model === 'hang-model' && r.aborted === true),
      10_000,
    );
  });
});

describe('the Memory backend down during a query', () => {
  it('fails the query naming the Memory (502 memory_error); back up, queries pass again', async () => {
    const broker = p.broker.url;
    const dead = `http://127.0.0.1:${await closedPort()}`;
    const point = async (address: string) => {
      await p.apply(obj('Memory', 'default', { address: { value: address } }));
      await p.cache.waitFor(
        Kinds.Memory,
        p.ns,
        'default',
        (m) => (m as Memory | undefined)?.status?.lastResolvedAddress === address,
        {
          timeoutMs: 15_000,
        },
      );
    };
    await point(dead);
    try {
      const seen = await failure(sdk.chat.completions.create({ model: 'agent/helper', messages: hi }));
      expect(seen).toMatchObject({ status: 502, code: 'memory_error', retry: 'false' });
      expect(seen.message).toMatch(/Memory default/);
    } finally {
      await point(broker);
    }
    const ok = await sdk.chat.completions.create({ model: 'agent/helper', messages: hi });
    expect(ok.choices[0]?.message.content).toContain('hi');
  });
});
