/**
 * Memory through the memory contract, with the real broker as the memory backend: conversations are
 * created and reported, history is read in full (paging) and follow-ups see earlier turns whatever
 * their target type; messages carry the query id.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BerthQueryEngine, createQueryEngine } from '../../pkg/engine/index.ts';
import { createLogger } from '../../pkg/log/index.ts';
import { type FakeModelServer, startFakeModel } from '../fixtures/fake-model.ts';
import { type FakeToolServer, startFakeTool } from '../fixtures/fake-tool.ts';
import { getJson, startTestBroker, type TestBroker } from './broker.ts';
import { agent, MapLookup, memory, model, query, run, team, tool } from './support.ts';

let fake: FakeModelServer;
let tools: FakeToolServer;
let broker: TestBroker;
let engine: BerthQueryEngine;
const lookup = new MapLookup();

interface MessagesPage {
  messages: Array<Record<string, unknown>>;
  total: number;
}

/** role/content of a stored record, whichever way the backend wraps it. */
function rc(r: Record<string, unknown>): { role: unknown; content: unknown } {
  const m = (r.message ?? r) as Record<string, unknown>;
  return { role: m.role, content: m.content };
}

beforeAll(async () => {
  [fake, tools, broker] = await Promise.all([startFakeModel(), startFakeTool(), startTestBroker()]);
  lookup
    .put('memory', memory('default', broker.url))
    .put('memory', memory('pending', undefined))
    .put('model', model('default', { baseUrl: fake.url }))
    .put('agent', agent('helper', {}))
    .put('team', team('solo', { members: [{ type: 'agent', name: 'helper' }], strategy: 'sequential' }))
    .put('tool', tool('echo', `${tools.url}/echo`));
  engine = createQueryEngine({
    lookup,
    ca: fake.ca,
    brokerUrl: broker.url,
    logger: createLogger({ level: 'silent' }),
  });
});

afterAll(async () => {
  await engine?.close();
  await Promise.all([fake?.close(), tools?.close(), broker?.stop()]);
});

describe('memory', () => {
  it('creates the conversation, reports it, and stores input and answer with the query id', async () => {
    const seen: string[] = [];
    const q = query({ type: 'model', name: 'default' }, 'remember 42');
    const out = await engine.run(q, {
      signal: new AbortController().signal,
      onConversation: (id) => seen.push(id),
    });
    expect(out.phase).toBe('done');
    const id = out.conversationId as string;
    expect(id).toBeTruthy();
    expect(seen).toEqual([id]);
    const page = await getJson<MessagesPage>(
      `${broker.url}/messages?conversation_id=${encodeURIComponent(id)}`,
    );
    expect(page.total).toBe(2);
    expect(page.messages.map(rc)).toEqual([
      { role: 'user', content: 'remember 42' },
      { role: 'assistant', content: 'echo: remember 42' },
    ]);
    expect(page.messages.every((m) => m.query_id === q.metadata.name)).toBe(true);
  });

  it('follow-ups on one conversationId see earlier turns whatever the target type', async () => {
    const first = await engine.run(query({ type: 'model', name: 'default' }, 'turn one'), run());
    const conversationId = first.conversationId as string;
    const agentOut = await engine.run(
      query({ type: 'agent', name: 'helper' }, 'turn two', { conversationId }),
      run(),
    );
    expect(agentOut).toMatchObject({ phase: 'done', conversationId });
    expect(fake.requests.at(-1)?.messages).toEqual([
      { role: 'system', content: 'You are helper.' },
      { role: 'user', content: 'turn one' },
      { role: 'assistant', content: 'echo: turn one' },
      { role: 'user', content: 'turn two' },
    ]);
    const toolOut = await engine.run(
      query({ type: 'tool', name: 'echo' }, 'turn three', { conversationId }),
      run(),
    );
    expect(toolOut.phase).toBe('done');
    await engine.run(query({ type: 'team', name: 'solo' }, 'turn four', { conversationId }), run());
    const sent = fake.requests.at(-1)?.messages ?? [];
    expect(sent.map((m) => m.content)).toEqual([
      'You are helper.',
      'turn one',
      'echo: turn one',
      'turn two',
      'echo: turn two',
      'turn three',
      (toolOut as { content: string }).content,
      'turn four',
    ]);
    const page = await getJson<MessagesPage>(
      `${broker.url}/messages?conversation_id=${conversationId}&limit=100`,
    );
    expect(page.total).toBe(8);
  });

  it('reads the full history page by page', async () => {
    const first = await engine.run(query({ type: 'model', name: 'default' }, 'start'), run());
    const conversationId = first.conversationId as string;
    const bulk = Array.from({ length: 1203 }, (_, i) => ({
      role: i % 2 ? 'assistant' : 'user',
      content: `m${i}`,
    }));
    const res = await fetch(`${broker.url}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ conversation_id: conversationId, query_id: 'bulk', messages: bulk }),
    });
    expect(res.ok).toBe(true);
    await engine.run(query({ type: 'model', name: 'default' }, 'how many?', { conversationId }), run());
    const sent = fake.requests.at(-1)?.messages ?? [];
    expect(sent).toHaveLength(2 + 1203 + 1);
    expect(sent[2]?.content).toBe('m0');
    expect(sent.at(-2)?.content).toBe('m1202');
  });

  it('a Memory without a resolved address, missing, or answering nonsense ends the query as MemoryError', async () => {
    // The fake tool answers every path with JSON that is no conversation.
    lookup.put('memory', memory('odd', tools.url));
    const cases: Array<[string, unknown]> = [
      ['pending', expect.stringContaining('Memory pending has no resolved address')],
      ['nope', 'Memory nope not found in namespace engine-test'],
      ['odd', expect.stringContaining('Memory odd')],
    ];
    for (const [name, message] of cases)
      expect(
        await engine.run(query({ type: 'model', name: 'default' }, 'x', { memory: { name } }), run()),
      ).toMatchObject({ phase: 'error', reason: 'MemoryError', message });
  });
});
