/**
 * Failures of /compat/v1 as the official SDK sees them (typed errors, no retries of what cannot
 * succeed), streams that fail after they began, clients that go away, and the wait timeout.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Kinds, type Query } from '../../pkg/api/index.ts';
import { kubectl } from '../support/kube.ts';
import { type Platform, startPlatform } from './platform.ts';

let p: Platform;
let client: OpenAI;
let hurried: OpenAI;

const WORDS = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ');

beforeAll(async () => {
  p = await startPlatform('compat-err');
  client = new OpenAI({ baseURL: `${p.api.url}/compat/v1`, apiKey: 'not-needed' });
  // An API service that gives up waiting after 500 ms, on the same controller and cache.
  const short = await p.startApi({ waitTimeoutMs: 500 });
  hurried = new OpenAI({ baseURL: `${short.url}/compat/v1`, apiKey: 'not-needed' });
  p.fake.script('broken-model', { fail: { status: 500, times: 1_000_000 } });
  p.fake.script('slow-model', { delayMs: 1500, reply: 'finally' });
  p.fake.script('stream-model', { reply: WORDS, chunkDelayMs: 60 });
});

afterAll(async () => {
  await p?.stop();
});

const queriesFor = (agent: string) =>
  ((p.cache.list(Kinds.Query, p.ns) ?? []) as Query[]).filter((q) => q.spec.target.name === agent);
const subscribers = () => p.broker.deps.hub.stats().subscribers;
const hi = [{ role: 'user' as const, content: 'hi' }];

async function rejection(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OpenAI.APIError);
  return err as InstanceType<typeof OpenAI.APIError>;
}

describe('request errors', () => {
  it('an unknown model prefix is a BadRequestError naming the model parameter, never retried', async () => {
    const err = await rejection(client.chat.completions.create({ model: 'gpt-4o', messages: hi }));
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.status).toBe(400);
    expect(err.param).toBe('model');
    expect(err.message).toMatch(/agent\/<name>/);
    expect(err.headers?.get('x-should-retry')).toBe('false');
    expect(err.requestID).toBeTruthy();
  });

  it('empty messages and malformed metadata JSON are BadRequestErrors', async () => {
    const empty = await rejection(client.chat.completions.create({ model: 'agent/helper', messages: [] }));
    expect(empty).toBeInstanceOf(OpenAI.BadRequestError);
    expect(empty.param).toBe('messages');
    const bad = await rejection(
      client.chat.completions.create({
        model: 'agent/helper',
        messages: hi,
        metadata: { queryAnnotations: '{not json' },
      }),
    );
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    expect(bad.param).toBe('metadata.queryAnnotations');
    const svc = await rejection(
      client.chat.completions.create({ model: 'agent/helper', messages: hi, metadata: { svc: '"x"' } }),
    );
    expect(svc).toBeInstanceOf(OpenAI.BadRequestError);
    expect(svc.param).toBe('metadata.svc');
  });

  it('an unknown target is a NotFoundError and creates no Query', async () => {
    const err = await rejection(client.chat.completions.create({ model: 'agent/nobody', messages: hi }));
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect(err.message).toContain(p.ns);
    expect(queriesFor('nobody')).toEqual([]);
  });
});

describe('query errors', () => {
  it('a failed query is an InternalServerError with its message; the SDK does not retry it', async () => {
    const err = await rejection(client.chat.completions.create({ model: 'agent/broken', messages: hi }));
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    // The model failed: end reason ModelError, 502 model_error (end-answers.ts).
    expect(err.status).toBe(502);
    expect(err.code).toBe('model_error');
    expect(err.message).toMatch(/Model broken-model .*HTTP 500/);
    expect(err.headers?.get('x-should-retry')).toBe('false');
    expect(queriesFor('broken')).toHaveLength(1);
  });

  it('a failure before the first chunk answers a streaming request with a JSON error', async () => {
    const err = await rejection(
      client.chat.completions.create({ model: 'agent/broken', messages: hi, stream: true }),
    );
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect(err.message).toMatch(/HTTP 500/);
    // The same answer as without streaming.
    expect(err.status).toBe(502);
    expect(err.code).toBe('model_error');
    expect(err.headers?.get('x-should-retry')).toBe('false');
    expect(queriesFor('broken')).toHaveLength(2);
  });

  it('a query still running after the wait timeout is a 504; the query keeps running', async () => {
    const err = await rejection(hurried.chat.completions.create({ model: 'agent/slow', messages: hi }));
    expect(err.status).toBe(504);
    expect(err.message).toMatch(/did not finish within 500 ms/);
    const [q] = queriesFor('slow');
    expect(queriesFor('slow')).toHaveLength(1);
    const done = (await p.cache.waitFor(
      Kinds.Query,
      p.ns,
      q?.metadata.name as string,
      (o) => {
        return (o as Query | undefined)?.status?.phase === 'done';
      },
      { timeoutMs: 10_000 },
    )) as Query;
    expect(done.status?.response?.content).toBe('finally');
  });
});

describe('streams that fail or lose their client', () => {
  it('an error after the first chunk ends the SDK stream with an APIError', async () => {
    const stream = await client.chat.completions.create({
      model: 'agent/streamer',
      messages: hi,
      stream: true,
    });
    let text = '';
    const err = await (async () => {
      try {
        for await (const chunk of stream) {
          if (!text) {
            // Cancel the running Query the way a user would, once streaming has begun.
            const r = await kubectl([
              'patch',
              'query',
              chunk.id,
              '-n',
              p.ns,
              '--type',
              'merge',
              '-p',
              '{"spec":{"cancel":true}}',
            ]);
            expect(r.code, r.stderr).toBe(0);
          }
          text += chunk.choices[0]?.delta.content ?? '';
        }
      } catch (e) {
        return e;
      }
    })();
    expect(text.startsWith('w0 ')).toBe(true);
    expect(text.length).toBeLessThan(WORDS.length);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as Error).message).toMatch(/cancel/);
  });

  it('a streaming client that disconnects stops the relay; the query runs to the end', async () => {
    expect(subscribers()).toBe(0);
    const stream = await client.chat.completions.create({
      model: 'agent/streamer',
      messages: hi,
      stream: true,
    });
    let id = '';
    for await (const chunk of stream) {
      id = chunk.id;
      // The relay holds one broker subscription while it streams.
      expect(subscribers()).toBe(1);
      stream.controller.abort();
      break;
    }
    await vi.waitFor(() => expect(subscribers()).toBe(0), { timeout: 5_000, interval: 20 });
    // Still running: pending (a run's `running` status is only written once it outlasts a short
    // delay) or running, not ended by the disconnect.
    expect(['pending', 'running']).toContain(
      (p.cache.get(Kinds.Query, p.ns, id) as Query).status?.phase ?? 'pending',
    );
    const done = (await p.cache.waitFor(
      Kinds.Query,
      p.ns,
      id,
      (o) => (o as Query | undefined)?.status?.phase === 'done',
      {
        timeoutMs: 15_000,
      },
    )) as Query;
    expect(done.status?.response?.content).toBe(WORDS);
  });

  it('a non-streaming client that disconnects leaves its query running to the end', async () => {
    const before = new Set(queriesFor('slow').map((q) => q.metadata.name));
    const ac = new AbortController();
    const call = client.chat.completions.create({ model: 'agent/slow', messages: hi }, { signal: ac.signal });
    const fresh = await vi.waitFor(
      () => {
        const q = queriesFor('slow').find((x) => !before.has(x.metadata.name));
        if (!q) throw new Error('query not created yet');
        return q;
      },
      { timeout: 5_000, interval: 20 },
    );
    ac.abort();
    await expect(call).rejects.toBeInstanceOf(OpenAI.APIUserAbortError);
    const done = (await p.cache.waitFor(
      Kinds.Query,
      p.ns,
      fresh.metadata.name,
      (o) => {
        return (o as Query | undefined)?.status?.phase === 'done';
      },
      { timeoutMs: 10_000 },
    )) as Query;
    expect(done.status?.response?.content).toBe('finally');
  });
});
