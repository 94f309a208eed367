/**
 * The official `openai` SDK, unchanged, against /compat/v1 of `berth up`-style wiring (real control
 * plane, controller, engine and broker; fake model over HTTPS): model list, every target type
 * streaming and not, usage, conversations and metadata.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kinds, type Query } from '../../pkg/api/index.ts';
import { kubectl } from '../support/kube.ts';
import { type Platform, startPlatform } from './platform.ts';

let p: Platform;
let client: OpenAI;

beforeAll(async () => {
  p = await startPlatform('compat-sdk');
  // Open mode needs no key; the SDK insists on some value, which the API ignores.
  client = new OpenAI({ baseURL: `${p.api.url}/compat/v1`, apiKey: 'not-needed' });
  p.fake.script('writer', { reply: 'draft one' });
  p.fake.script('critic', {
    reply: (r) => `critique of ${r.messages.filter((m) => m.role === 'assistant').at(-1)?.content}`,
  });
  p.fake.script('usage-model', { reply: 'counted words here', usage: { prompt: 17, completion: 4 } });
});

afterAll(async () => {
  await p?.stop();
});

const queryOf = (name: string) => p.cache.get(Kinds.Query, p.ns, name) as Query | undefined;

/**
 * What each target type answers to "hi" (tool: the fake tool's JSON echo of its input), and what it
 * streams: a team streams every member's turn, separated by a blank line; its answer is the last turn.
 */
const toolAnswer = (t: string) =>
  expect(JSON.parse(t)).toEqual({ path: '/echo', method: 'POST', args: { input: 'hi' } });
const TARGETS: Array<[string, (text: string) => void, (text: string) => void]> = [
  ['agent/helper', (t) => expect(t).toBe('echo: hi'), (t) => expect(t).toBe('echo: hi')],
  [
    'team/duo',
    (t) => expect(t).toBe('critique of draft one'),
    (t) => expect(t).toBe('draft one\n\ncritique of draft one'),
  ],
  ['model/default', (t) => expect(t).toBe('echo: hi'), (t) => expect(t).toBe('echo: hi')],
  ['tool/echo', toolAnswer, toolAnswer],
];

describe('models', () => {
  it('lists every agent, team, model and tool of the namespace with its creation time', async () => {
    const list = await client.models.list();
    const ids = list.data.map((m) => m.id);
    expect(ids).toEqual(
      expect.arrayContaining(['agent/helper', 'agent/slow', 'team/duo', 'model/default', 'tool/echo']),
    );
    expect(ids.every((id) => /^(agent|team|model|tool)\//.test(id))).toBe(true);
    const helper = list.data.find((m) => m.id === 'agent/helper');
    const created = Date.parse(
      p.cache.get(Kinds.Agent, p.ns, 'helper')?.metadata?.creationTimestamp as never,
    );
    expect(helper).toEqual({
      id: 'agent/helper',
      object: 'model',
      created: created / 1000,
      owned_by: 'berth',
    });
  });

  it('retrieves one model by its URL-encoded id; an unknown one is a NotFoundError', async () => {
    expect(await client.models.retrieve('team/duo')).toMatchObject({ id: 'team/duo', object: 'model' });
    await expect(client.models.retrieve('agent/nobody')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });
});

describe('non-streaming completions', () => {
  it.each(TARGETS)('%s answers through a Query', async (model, check) => {
    const res = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
    expect(res.object).toBe('chat.completion');
    expect(res.model).toBe(model);
    expect(res.id).toMatch(/^chat-query-[0-9a-f]{10}$/);
    expect(res.choices).toHaveLength(1);
    expect(res.choices[0]?.message.role).toBe('assistant');
    expect(res.choices[0]?.finish_reason).toBe('stop');
    check(res.choices[0]?.message.content ?? '');
    const svc = (res as unknown as { svc: Record<string, any> }).svc;
    expect(svc.query_name).toBe(res.id);
    expect(svc.annotations['berth.dev/streaming-enabled']).toBe('false');
    const q = queryOf(res.id);
    expect(q?.status?.phase).toBe('done');
    expect(q?.spec.target).toEqual({ type: model.split('/')[0], name: model.split('/')[1] });
    expect(res.created).toBe(Math.floor(Date.parse(q?.metadata.creationTimestamp as never) / 1000));
  });

  it('passes the whole message history and reports the model call usage', async () => {
    const before = p.fake.requests.length;
    const res = await client.chat.completions.create({
      model: 'model/usage-model',
      messages: [
        { role: 'system', content: 'be terse' },
        { role: 'user', content: 'one' },
        { role: 'assistant', content: 'two' },
        { role: 'user', content: 'three' },
      ],
    });
    expect(res.usage).toEqual({ prompt_tokens: 17, completion_tokens: 4, total_tokens: 21 });
    const sent = p.fake.requests.slice(before).find((r) => r.model === 'usage-model');
    expect(sent?.messages.map((m) => [m.role, m.content])).toEqual([
      ['system', 'be terse'],
      ['user', 'one'],
      ['assistant', 'two'],
      ['user', 'three'],
    ]);
  });
});

async function collect(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>) {
  const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
  for await (const c of stream) chunks.push(c);
  const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
  return { chunks, text };
}

describe('streaming completions', () => {
  it.each(TARGETS)('%s streams chat.completion.chunks', async (model, _answer, check) => {
    const stream = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    const { chunks, text } = await collect(stream);
    check(text);
    expect(chunks.length).toBeGreaterThanOrEqual(2);
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === model)).toBe(true);
    const id = chunks[0]?.id as string;
    expect(chunks.every((c) => c.id === id)).toBe(true);
    expect(chunks[0]?.choices[0]?.delta.role).toBe('assistant');
    expect(chunks.slice(1).some((c) => c.choices[0]?.delta.role)).toBe(false);
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('stop');
    expect(chunks.slice(0, -1).every((c) => c.choices[0]?.finish_reason == null)).toBe(true);
    expect(chunks.some((c) => c.usage)).toBe(false);
    expect(queryOf(id)?.metadata.annotations?.['berth.dev/streaming-enabled']).toBe('true');
  });

  it('streams word by word from the model and honours stream_options.include_usage', async () => {
    const stream = await client.chat.completions.create({
      model: 'model/usage-model',
      messages: [{ role: 'user', content: 'count' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const { chunks, text } = await collect(stream);
    expect(text).toBe('counted words here');
    expect(chunks.filter((c) => c.choices[0]?.delta.content).length).toBe(3);
    const last = chunks.at(-1);
    expect(last?.choices).toEqual([]);
    expect(last?.usage).toEqual({ prompt_tokens: 17, completion_tokens: 4, total_tokens: 21 });
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe('stop');
  });
});

describe('conversations and metadata', () => {
  it('continues a conversation: the second call sees the first call and its answer', async () => {
    const first = await client.chat.completions.create({
      model: 'agent/helper',
      messages: [{ role: 'user', content: 'my name is Ada' }],
    });
    const contextId = (first as any).svc.completedQuery.status.a2a.contextId as string;
    expect(contextId).toBeTruthy();
    expect(queryOf(first.id)?.status?.conversationId).toBe(contextId);

    const before = p.fake.requests.length;
    const second = await client.chat.completions.create({
      model: 'agent/helper',
      messages: [{ role: 'user', content: 'what is my name?' }],
      metadata: { conversationId: contextId },
    });
    expect((second as any).svc.completedQuery.status.a2a.contextId).toBe(contextId);
    expect(queryOf(second.id)?.spec.conversationId).toBe(contextId);
    const seen = p.fake.requests
      .slice(before)
      .at(-1)
      ?.messages.map((m) => [m.role, m.content]);
    expect(seen).toEqual([
      ['system', 'You are helpful.'],
      ['user', 'my name is Ada'],
      ['assistant', 'echo: my name is Ada'],
      ['user', 'what is my name?'],
    ]);
  });

  it('applies metadata.queryAnnotations and metadata.svc to the Query and keeps other metadata', async () => {
    const res = await client.chat.completions.create({
      model: 'agent/helper',
      messages: [{ role: 'user', content: 'tag me' }],
      metadata: {
        queryAnnotations: JSON.stringify({ 'team.example/owner': 'qa', 'team.example/ticket': 'T-1' }),
        svc: JSON.stringify({ annotations: { 'svc.example/source': 'sdk' } }),
        sessionId: 'sess-42',
        user: 'u-7',
      },
    });
    const expected = {
      'team.example/owner': 'qa',
      'team.example/ticket': 'T-1',
      'svc.example/source': 'sdk',
      'berth.dev/chat-metadata': '{"user":"u-7"}',
      'berth.dev/streaming-enabled': 'false',
    };
    expect((res as any).svc.annotations).toMatchObject(expected);
    // What kubectl shows is what the API server stored, not only what the cache holds.
    const got = await kubectl(['get', 'query', res.id, '-n', p.ns, '-o', 'json']);
    expect(got.code, got.stderr).toBe(0);
    const q = JSON.parse(got.stdout) as Query;
    expect(q.metadata.annotations).toMatchObject(expected);
    expect(q.spec.sessionId).toBe('sess-42');
    // Created with the controller's cleanup finalizer, so the controller need not write it.
    expect(q.metadata.finalizers).toEqual(['berth.dev/query-cleanup']);
    expect(q.spec.input).toEqual([{ role: 'user', content: 'tag me' }]);
  });
});
