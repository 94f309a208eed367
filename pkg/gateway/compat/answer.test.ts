import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Context } from 'hono';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Query } from '../../api/index.ts';
import { createLogger } from '../../log/index.ts';
import type { GatewayDeps } from '../deps.ts';
import { openAnswer } from './answer.ts';
import type { UpstreamChunk } from './broker-stream.ts';

/** The informer cache's waitFor over one Query the test finishes. */
function queryCache() {
  let current: Query | undefined;
  const checks = new Set<() => void>();
  return {
    finish(phase: string, reason: string, message = `the query ended: ${reason}`) {
      current = {
        metadata: { name: 'chat-query-1' },
        status: {
          phase,
          message,
          response: { content: 'the answer' },
          tokenUsage: { promptTokens: 1, completionTokens: 2, totalTokens: 3 },
          conditions: [{ type: 'Completed', status: 'True', reason, message }],
        },
      } as unknown as Query;
      for (const check of checks) check();
    },
    waitFor(
      _ref: unknown,
      _ns: string,
      _name: string,
      done: (q: unknown) => boolean,
      o: { timeoutMs: number; signal?: AbortSignal },
    ) {
      return new Promise((resolve, reject) => {
        const stop = () => {
          clearTimeout(timer);
          checks.delete(check);
          o.signal?.removeEventListener('abort', aborted);
        };
        const check = () => {
          if (!done(current)) return;
          stop();
          resolve(current);
        };
        const aborted = () => {
          stop();
          reject(o.signal?.reason);
        };
        const timer = setTimeout(() => {
          stop();
          reject(new Error(`timed out after ${o.timeoutMs} ms`));
        }, o.timeoutMs);
        checks.add(check);
        o.signal?.addEventListener('abort', aborted);
        check();
      });
    },
  };
}

/** A broker whose `GET /stream/{query}` plays what the test gives it. */
let play: (res: ServerResponse, req: IncomingMessage) => void = (res) => res.end();
/** The status the broker answers a request with (an SSE stream played by `play` when 200). */
let statusOf: (req: IncomingMessage) => number = () => 200;
let brokerUrl = '';
const server = createServer((req, res) => {
  const status = statusOf(req);
  if (status !== 200) return void res.writeHead(status).end();
  res.writeHead(200, { 'content-type': 'text/event-stream' }).flushHeaders();
  play(res, req);
});
const frame = (data: unknown) => `data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
const content = (text: string) => ({
  id: 'u1',
  choices: [{ delta: { content: text }, finish_reason: null }],
});

// Idle connections stay usable for longer than a stall (Node's 5 s default: undici lets go after ~3 s).
server.keepAliveTimeout = 60_000;
beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  brokerUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

function open(opts: { broker?: boolean; brokerUrl?: string; waitTimeoutMs?: number } = {}) {
  const cache = queryCache();
  const client = new AbortController();
  const c = { req: { raw: { signal: client.signal } } } as unknown as Context;
  const deps = {
    cache,
    namespace: 'ns',
    logger: createLogger({ name: 'answer-test', level: 'silent' }),
    brokerUrl: opts.broker === false ? undefined : (opts.brokerUrl ?? brokerUrl),
  } as unknown as GatewayDeps;
  const query = { metadata: { name: 'chat-query-1' } } as Query;
  return { cache, client, answer: openAnswer(c, deps, query, opts.waitTimeoutMs ?? 5000) };
}

async function drain(chunks: AsyncGenerator<UpstreamChunk>) {
  const seen: UpstreamChunk[] = [];
  for await (const chunk of chunks) seen.push(chunk);
  return seen;
}

describe('answer', () => {
  it("outcome(): the Query's end with its reason, message and usage", async () => {
    const { cache, answer } = open();
    setTimeout(() => cache.finish('error', 'Timeout', 'query timed out after 5m (spec.timeout)'), 5);
    expect(await answer.outcome()).toMatchObject({
      reason: 'Timeout',
      message: 'query timed out after 5m (spec.timeout)',
      usage: { totalTokens: 3 },
    });
    await answer.close();
  });

  it('outcome(): a client that left is undefined; a wait that ran out a 504', async () => {
    const gone = open();
    const pending = gone.answer.outcome();
    gone.client.abort();
    expect(await pending).toBeUndefined();
    const slow = open({ waitTimeoutMs: 20 });
    await expect(slow.answer.outcome()).rejects.toMatchObject({ status: 504, code: 'timeout' });
  });

  it('first(): a Query that ends before any chunk answers with its reason, as non-streaming does', async () => {
    play = () => {}; // the broker waits for a query that never writes
    const { cache, answer } = open();
    setTimeout(() => cache.finish('error', 'Timeout', 'query timed out after 1s (spec.timeout)'), 5);
    await expect(answer.first()).rejects.toMatchObject({
      status: 504,
      type: 'timeout_error',
      code: 'timeout',
      message: 'query timed out after 1s (spec.timeout)',
    });
    await answer.close();
  });

  it("first(): an error chunk first answers with the engine's reason", async () => {
    play = (res) =>
      res.end(
        frame({
          error: { message: 'HTTP 500', type: 'server_error', code: 'query_error', reason: 'ModelError' },
        }) + frame('[DONE]'),
      );
    const { answer } = open();
    await expect(answer.first()).rejects.toMatchObject({
      status: 502,
      type: 'server_error',
      code: 'model_error',
    });
    await answer.close();
  });

  it('chunks(): from the first to [DONE]; an error chunk later throws its mapped error', async () => {
    play = (res) => res.end(frame(content('a')) + frame(content('b')) + frame('[DONE]'));
    const ok = open();
    expect(await ok.answer.first()).toMatchObject(content('a'));
    expect((await drain(ok.answer.chunks())).map((c) => c.choices?.[0]?.delta?.content)).toEqual(['a', 'b']);
    await ok.answer.close();

    play = (res) =>
      res.end(
        frame(content('a')) +
          frame({ error: { message: 'late', type: 'timeout_error', code: 'timeout', reason: 'Timeout' } }) +
          frame('[DONE]'),
      );
    const late = open();
    await late.answer.first();
    await expect(drain(late.answer.chunks())).rejects.toMatchObject({
      type: 'timeout_error',
      code: 'timeout',
      message: 'late',
    });
    await late.answer.close();
  });

  it('chunks(): a stream silent after its Query succeeded is resumed after the last record received', async () => {
    const asked: Array<string | undefined> = [];
    play = (res, req) => {
      asked.push(req.headers['last-event-id'] as string | undefined);
      // The first delivery stalls after one record (as one broker pod's did during a rollout); the
      // store has the rest.
      if (asked.length === 1) res.write(`id: 1\n${frame(content('one'))}`);
      else res.end(`id: 2\n${frame(content('two'))}${frame('[DONE]')}`);
    };
    const { cache, answer } = open({ waitTimeoutMs: 20_000 });
    const first = await answer.first();
    expect(first?.choices?.[0]?.delta?.content).toBe('one');
    const started = Date.now();
    cache.finish('done', 'Succeeded');
    const rest = await drain(answer.chunks());
    expect(rest.map((c) => c.choices?.[0]?.delta?.content)).toEqual(['one', 'two']);
    expect(asked).toEqual([undefined, '1']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2500);
    expect(Date.now() - started).toBeLessThan(8000);
    await answer.close();
  }, 15_000);

  it('chunks(): a resumption goes over a new connection, not one kept alive in the pool', async () => {
    const ports: Array<[string, number | undefined]> = [];
    statusOf = (req) => {
      ports.push([req.url ?? '', req.socket.remotePort]);
      return req.url === '/warm' ? 204 : 200;
    };
    let held: ServerResponse | undefined;
    let streams = 0;
    play = (res, req) => {
      if (req.url === '/hold') held = res;
      else if (++streams === 1) res.write(`id: 1\n${frame(content('one'))}`);
      else res.end(`id: 2\n${frame(content('two'))}${frame('[DONE]')}`);
    };
    try {
      // The pool's connections: one busy with /hold while the stream takes another, then idle and
      // alive when the stream stalls — the one undici would hand the resumption.
      const origin = `${brokerUrl}`;
      await Promise.all([1, 2, 3].map(async () => (await request(`${origin}/warm`)).body.dump()));
      const hold = await request(`${origin}/hold`);
      const { cache, answer } = open({ waitTimeoutMs: 20_000 });
      await answer.first();
      held?.end();
      await hold.body.dump();
      cache.finish('done', 'Succeeded');
      expect((await drain(answer.chunks())).map((c) => c.choices?.[0]?.delta?.content)).toEqual([
        'one',
        'two',
      ]);
      await answer.close();
      const earlier = ports.slice(0, -1).map(([, port]) => port);
      expect(ports.at(-1)?.[0]).toBe('/stream/chat-query-1?from-beginning=true');
      expect(earlier).not.toContain(ports.at(-1)?.[1]);
    } finally {
      statusOf = () => 200;
    }
  }, 15_000);

  it('chunks(): a stream that ends without [DONE] is stream_ended, unless the Query records the rest', async () => {
    // Relayed "a", recorded "the answer": the record cannot complete it.
    play = (res) => res.end(frame(content('a')));
    const other = open();
    await other.answer.first();
    other.cache.finish('done', 'Succeeded');
    await expect(drain(other.answer.chunks())).rejects.toMatchObject({ status: 502, code: 'stream_ended' });
    await other.answer.close();

    // Relayed "the ", recorded "the answer": the rest is the last chunk.
    play = (res) => res.end(frame(content('the ')));
    const ok = open();
    await ok.answer.first();
    ok.cache.finish('done', 'Succeeded');
    expect(await drain(ok.answer.chunks())).toEqual([
      content('the '),
      { id: 'u1', choices: [{ delta: { content: 'answer' }, finish_reason: 'stop' }] },
    ]);
    await ok.answer.close();

    // A Query that failed: its stream's loss is not covered up.
    const failed = open();
    await failed.answer.first();
    failed.cache.finish('error', 'ModelError');
    await expect(drain(failed.answer.chunks())).rejects.toMatchObject({ code: 'stream_ended' });
    await failed.answer.close();
  });

  it('chunks(): a silent stream that cannot be resumed is completed from the Query of record', async () => {
    const asked: Array<string | undefined> = [];
    play = (res, req) => {
      asked.push(req.headers['last-event-id'] as string | undefined);
      res.write(`id: 1\n${frame(content('the '))}`); // then silent
    };
    // The resumption finds no stream (a broker that lost it): 404.
    statusOf = (req) => (req.headers['last-event-id'] ? 404 : 200);
    try {
      const { cache, answer } = open({ waitTimeoutMs: 20_000 });
      await answer.first();
      cache.finish('done', 'Succeeded');
      const rest = await drain(answer.chunks());
      expect(rest.map((c) => [c.choices?.[0]?.delta?.content, c.choices?.[0]?.finish_reason])).toEqual([
        ['the ', null],
        ['answer', 'stop'],
      ]);
      expect(asked).toEqual([undefined]);
      await answer.close();
    } finally {
      statusOf = () => 200;
    }
  }, 15_000);

  it('without a broker: the finished answer as one chunk, or the failure of its end', async () => {
    const ok = open({ broker: false });
    setTimeout(() => ok.cache.finish('done', 'Succeeded'), 5);
    expect(await ok.answer.first()).toMatchObject({
      choices: [{ delta: { content: 'the answer' }, finish_reason: 'stop' }],
    });
    expect(await drain(ok.answer.chunks())).toHaveLength(1);
    await ok.answer.close();

    const failed = open({ broker: false });
    setTimeout(() => failed.cache.finish('error', 'ToolError', 'Tool t: HTTP 500'), 5);
    await expect(failed.answer.first()).rejects.toMatchObject({ status: 502, code: 'tool_error' });
    await failed.answer.close();
  });

  it('first(): a broker that cannot serve the stream: the answer of record once the Query ends', async () => {
    statusOf = () => 500;
    try {
      const ok = open();
      setTimeout(() => ok.cache.finish('done', 'Succeeded'), 5);
      expect(await ok.answer.first()).toMatchObject({
        choices: [{ delta: { content: 'the answer' }, finish_reason: 'stop' }],
      });
      expect(await drain(ok.answer.chunks())).toHaveLength(1);
      await ok.answer.close();

      const failed = open();
      setTimeout(() => failed.cache.finish('error', 'ToolError', 'Tool t: HTTP 500'), 5);
      await expect(failed.answer.first()).rejects.toMatchObject({ status: 502, code: 'tool_error' });
      await failed.answer.close();
    } finally {
      statusOf = () => 200;
    }
    // Unreachable (nothing listens there): the same.
    const gone = open({ brokerUrl: 'http://127.0.0.1:9' });
    setTimeout(() => gone.cache.finish('done', 'Succeeded'), 5);
    expect(await gone.answer.first()).toMatchObject({ choices: [{ delta: { content: 'the answer' } }] });
    await gone.answer.close();
  });

  it('first(): a client that left is undefined (the handler answers 499)', async () => {
    play = () => {};
    const { client, answer } = open();
    const first = answer.first();
    setTimeout(() => client.abort(), 5);
    expect(await first).toBeUndefined();
    await answer.close();
  });
});
