/**
 * What a query records in the real broker: streaming chunks (visible while the model still streams,
 * then [DONE]), error chunks, operation events in order with the query fields, and one trace per query
 * with the session attribute.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ANNOTATION_STREAMING } from '../../pkg/api/index.ts';
import { type BerthQueryEngine, createQueryEngine } from '../../pkg/engine/index.ts';
import { createLogger } from '../../pkg/log/index.ts';
import { type FakeModelServer, startFakeModel } from '../fixtures/fake-model.ts';
import { type FakeToolServer, startFakeTool } from '../fixtures/fake-tool.ts';
import { getJson, readSse, startTestBroker, type TestBroker } from './broker.ts';
import { agent, MapLookup, memory, model, query, run, tool } from './support.ts';

let fake: FakeModelServer;
let tools: FakeToolServer;
let broker: TestBroker;
let engine: BerthQueryEngine;
const lookup = new MapLookup();
const streaming = { [ANNOTATION_STREAMING]: 'true' };

interface Chunk {
  choices?: Array<{ delta?: { content?: string; tool_calls?: unknown }; finish_reason?: string | null }>;
  error?: { message: string; type: string; code: string; reason?: string };
}
interface EventRecord {
  reason: string;
  eventType: string;
  data: Record<string, string>;
}

const contentOf = (chunks: unknown[]) =>
  (chunks as Chunk[]).map((c) => c.choices?.[0]?.delta?.content ?? '').join('');

beforeAll(async () => {
  [fake, tools, broker] = await Promise.all([startFakeModel(), startFakeTool(), startTestBroker()]);
  lookup
    .put('memory', memory('default', broker.url))
    .put('model', model('default', { baseUrl: fake.url }))
    .put('model', model('chatty', { baseUrl: fake.url }))
    .put('model', model('broken', { baseUrl: fake.url }))
    .put('model', model('slow', { baseUrl: fake.url }))
    .put('model', model('weather-model', { baseUrl: fake.url }))
    .put('tool', tool('weather', `${tools.url}/weather`))
    .put('agent', agent('forecaster', { modelRef: { name: 'weather-model' }, tools: [{ name: 'weather' }] }));
  fake.script('chatty', { reply: 'one two three four five', chunkDelayMs: 150 });
  fake.script('broken', { fail: { status: 500, times: 100 } });
  fake.script('slow', { delayMs: 10_000 });
  fake.script('weather-model', {
    toolCall: { name: 'weather', arguments: '{"city":"Oslo"}' },
    reply: 'sunny',
  });
  engine = createQueryEngine({
    lookup,
    ca: fake.ca,
    brokerUrl: broker.url,
    maxRetries: 0,
    logger: createLogger({ level: 'silent' }),
  });
});

afterAll(async () => {
  await engine?.close();
  await Promise.all([fake?.close(), tools?.close(), broker?.stop()]);
});

describe('streaming', () => {
  it('chunks reach the broker while the model is still streaming, then the stream completes', async () => {
    const q = query({ type: 'model', name: 'chatty' }, 'talk', { annotations: streaming });
    let firstChunkAt = 0;
    const reading = readSse(`${broker.url}/stream/${q.metadata.name}?from-beginning=true&wait-for-query=20`, {
      onData: () => {
        firstChunkAt ||= performance.now();
      },
    });
    const out = await engine.run(q, run());
    const doneAt = performance.now();
    const chunks = await reading;
    expect(out).toMatchObject({ phase: 'done', content: 'one two three four five' });
    expect(contentOf(chunks)).toBe('one two three four five');
    // five words 150 ms apart: the first chunk must be visible well before the query ends
    expect(doneAt - firstChunkAt).toBeGreaterThan(300);
    // replay after completion gives the same chunks and ends with [DONE]
    const replay = await readSse(`${broker.url}/stream/${q.metadata.name}?from-beginning=true`);
    expect(contentOf(replay)).toBe('one two three four five');
  });

  it('an agent streams only its final answer, not the tool-call deltas', async () => {
    const q = query({ type: 'agent', name: 'forecaster' }, 'weather?', { annotations: streaming });
    const out = await engine.run(q, run());
    expect(out).toMatchObject({ phase: 'done', content: 'sunny' });
    const chunks = (await readSse(`${broker.url}/stream/${q.metadata.name}?from-beginning=true`)) as Chunk[];
    expect(contentOf(chunks)).toBe('sunny');
    expect(chunks.some((c) => c.choices?.[0]?.delta?.tool_calls)).toBe(false);
  });

  it('a failing model gives an error chunk, then the stream completes', async () => {
    const q = query({ type: 'model', name: 'broken' }, 'x', { annotations: streaming });
    const out = await engine.run(q, run());
    expect(out.phase).toBe('error');
    const chunks = (await readSse(`${broker.url}/stream/${q.metadata.name}?from-beginning=true`)) as Chunk[];
    expect(chunks.at(-1)?.error).toMatchObject({
      code: 'query_error',
      reason: 'ModelError',
      message: expect.stringContaining('HTTP 500'),
    });
  });
});

describe('events and traces', () => {
  it('a query records its operations in order with the query fields', async () => {
    const input = 'an input that is certainly longer than forty-eight characters in total';
    const q = query({ type: 'agent', name: 'forecaster' }, input, { sessionId: 'sess-events' });
    const out = await engine.run(q, run());
    expect(out.phase).toBe('done');
    await engine.flush();
    const events = await getJson<{ items: EventRecord[] }>(
      `${broker.url}/events/${q.metadata.name}?limit=100`,
    );
    expect(events.items.map((e) => e.reason)).toEqual([
      'QueryExecutionStart',
      'MemoryCreateConversationStart',
      'MemoryCreateConversationComplete',
      'AgentExecutionStart',
      'LLMCallStart',
      'LLMCallComplete',
      'ToolCallStart',
      'ToolCallComplete',
      'LLMCallStart',
      'LLMCallComplete',
      'AgentExecutionComplete',
      'MemoryAddMessagesStart',
      'MemoryAddMessagesComplete',
      'QueryExecutionComplete',
    ]);
    for (const e of events.items) {
      expect(e.data).toMatchObject({
        queryId: q.metadata.name,
        queryName: q.metadata.name,
        queryNamespace: 'engine-test',
        queryUid: q.metadata.uid,
        sessionId: 'sess-events',
      });
      for (const v of Object.values(e.data)) expect(typeof v).toBe('string');
    }
    const start = events.items[0];
    expect(start?.data.input).toHaveLength(48);
    expect(input.startsWith((start?.data.input ?? '').slice(0, 47))).toBe(true);
    expect(events.items.at(-1)?.data).toMatchObject({ totalTokens: '30', promptTokens: '20' });
    expect(engine.stats().events).toMatchObject({ dropped: 0, failed: 0 });
  });

  it('one trace per query, spans carry svc.session.id', async () => {
    const q = query({ type: 'agent', name: 'forecaster' }, 'trace me', { sessionId: 'sess-trace' });
    await engine.run(q, run());
    await engine.flush();
    interface Span {
      traceId: string;
      spanId: string;
      parentSpanId?: string;
      name: string;
    }
    const traces = await getJson<{ items: Array<{ traceId: string; spans: Span[] }> }>(
      `${broker.url}/traces?session_id=sess-trace`,
    );
    expect(traces.items).toHaveLength(1);
    const spans = traces.items[0]?.spans ?? [];
    expect(spans.map((s) => s.name).sort()).toEqual(
      [
        'agent.execution',
        'llm.call',
        'llm.call',
        'memory.MemoryAddMessages',
        'memory.MemoryCreateConversation',
        'query',
        'tool.call',
      ].sort(),
    );
    const root = spans.find((s) => s.name === 'query');
    expect(root?.parentSpanId || undefined).toBeUndefined();
    const agentSpan = spans.find((s) => s.name === 'agent.execution');
    expect(agentSpan?.parentSpanId).toBe(root?.spanId);
    expect(
      spans.filter((s) => s.name === 'llm.call').every((s) => s.parentSpanId === agentSpan?.spanId),
    ).toBe(true);
  });

  it('cancellation is recorded as QueryExecutionCanceled', async () => {
    const ac = new AbortController();
    const q = query({ type: 'model', name: 'slow' }, 'wait', { annotations: streaming });
    const before = fake.requests.length;
    const pending = engine.run(q, run(ac.signal));
    await vi.waitFor(() => expect(fake.requests.length).toBe(before + 1), { interval: 5 });
    ac.abort();
    expect(await pending).toMatchObject({ phase: 'canceled' });
    await engine.flush();
    const events = await getJson<{ items: EventRecord[] }>(`${broker.url}/events/${q.metadata.name}`);
    expect(events.items.at(-1)).toMatchObject({ reason: 'QueryExecutionCanceled', eventType: 'Warning' });
    const chunks = (await readSse(`${broker.url}/stream/${q.metadata.name}?from-beginning=true`)) as Chunk[];
    expect(chunks.at(-1)?.error).toMatchObject({ code: 'canceled', reason: 'Canceled' });
  });
});
