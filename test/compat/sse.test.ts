/**
 * The wire format of /compat/v1 streams as curl sees it: headers, `data:` framing, role, finish,
 * usage, `[DONE]`, error frames after streaming began; and the single-chunk stream of an API service
 * that has no broker configured.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectl } from '../support/kube.ts';
import { type Platform, startPlatform } from './platform.ts';

let p: Platform;
let noBroker: string;

beforeAll(async () => {
  p = await startPlatform('compat-sse');
  noBroker = (await p.startApi({ broker: false })).url;
  // 6 words 500 ms apart: the cancel (a kubectl patch, seconds on a loaded machine) lands mid-stream.
  p.fake.script('stream-model', { reply: 'one two three four five six', chunkDelayMs: 500 });
  p.fake.script('usage-model', { reply: 'a b', usage: { prompt: 9, completion: 2 } });
});

afterAll(async () => {
  await p?.stop();
});

const post = (base: string, body: Record<string, unknown>) =>
  fetch(`${base}/compat/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], ...body }),
  });

/** Splits an SSE body into events; each must consist of exactly one `data: ` line. */
function frames(body: string): string[] {
  expect(body.endsWith('\n\n')).toBe(true);
  return body
    .slice(0, -2)
    .split('\n\n')
    .map((event) => {
      expect(event).toMatch(/^data: [^\n]+$/);
      return event.slice('data: '.length);
    });
}

describe('SSE framing', () => {
  it('streams data: frames with role first, finish last, usage on request and [DONE]', async () => {
    const res = await post(p.api.url, {
      model: 'model/usage-model',
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    const data = frames(await res.text());
    expect(data.at(-1)).toBe('[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
    expect(chunks.map((c) => c.object)).toEqual(chunks.map(() => 'chat.completion.chunk'));
    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: 'a ' });
    expect(chunks[1].choices[0].delta).toEqual({ content: 'b' });
    expect(chunks[2].choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
    expect(chunks[3]).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 },
    });
    expect(chunks).toHaveLength(4);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
  });

  it('answers non-streaming requests as JSON with a request id', async () => {
    const res = await post(p.api.url, { model: 'agent/helper' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect((await res.json()).choices[0].message).toEqual({ role: 'assistant', content: 'echo: hi' });
  });

  it('after streaming began, a failure is an error frame followed by [DONE]', async () => {
    const res = await post(p.api.url, { model: 'agent/streamer', stream: true });
    expect(res.status).toBe(200);
    const reader = (res.body as ReadableStream<Uint8Array>).pipeThrough(new TextDecoderStream()).getReader();
    let body = '';
    let canceled = false;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      body += value;
      if (!canceled && body.includes('\n\n')) {
        canceled = true;
        const id = JSON.parse(body.slice(6, body.indexOf('\n\n'))).id as string;
        const r = await kubectl([
          'patch',
          'query',
          id,
          '-n',
          p.ns,
          '--type',
          'merge',
          '-p',
          '{"spec":{"cancel":true}}',
        ]);
        expect(r.code, r.stderr).toBe(0);
      }
    }
    const data = frames(body);
    expect(data.at(-1)).toBe('[DONE]');
    const error = JSON.parse(data.at(-2) as string);
    // The end reason Canceled, as the non-streaming answer has it (end-answers.ts).
    expect(error.error).toMatchObject({
      message: 'query canceled',
      type: 'server_error',
      code: 'query_canceled',
    });
    expect(JSON.parse(data[0] as string).choices[0].delta).toEqual({ role: 'assistant', content: 'one ' });
    expect(data.slice(0, -2).every((d) => JSON.parse(d).choices[0].finish_reason === null)).toBe(true);
  });

  it('a failure before the first chunk is a plain JSON error with its status', async () => {
    const res = await post(p.api.url, { model: 'agent/helper', stream: true, messages: [] });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('x-should-retry')).toBe('false');
    expect((await res.json()).error).toMatchObject({ type: 'invalid_request_error', param: 'messages' });
  });
});

describe('without a broker', () => {
  it('streams the finished answer as a single content chunk, the finish chunk and [DONE]', async () => {
    const res = await post(noBroker, {
      model: 'agent/streamer',
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const data = frames(await res.text());
    expect(data).toHaveLength(4);
    const [content, finish, usage] = data.slice(0, 3).map((d) => JSON.parse(d));
    expect(content.choices[0]).toMatchObject({
      delta: { role: 'assistant', content: 'one two three four five six' },
      finish_reason: null,
    });
    expect(finish.choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
    expect(usage.usage).toEqual({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 });
    expect(data[3]).toBe('[DONE]');
  });

  it('works with the SDK', async () => {
    const client = new OpenAI({ baseURL: `${noBroker}/compat/v1`, apiKey: 'not-needed' });
    const stream = await client.chat.completions.create({
      model: 'tool/echo',
      messages: [{ role: 'user', content: 'ping' }],
      stream: true,
    });
    const chunks = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks).toHaveLength(2);
    expect(JSON.parse(chunks[0]?.choices[0]?.delta.content ?? '')).toMatchObject({ args: { input: 'ping' } });
    expect(chunks[1]?.choices[0]?.finish_reason).toBe('stop');
  });
});
