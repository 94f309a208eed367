/**
 * Every target type against a fake OpenAI-compatible model over real HTTPS (test CA given to the
 * engine), a fake HTTP tool, and the failure paths: bad input, missing objects, invalid model URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BerthQueryEngine, createQueryEngine } from '../../pkg/engine/index.ts';
import { createLogger } from '../../pkg/log/index.ts';
import { type FakeModelServer, startFakeModel } from '../fixtures/fake-model.ts';
import { type FakeToolServer, startFakeTool } from '../fixtures/fake-tool.ts';
import { agent, MapLookup, model, NS, query, run, team, tool } from './support.ts';

let fake: FakeModelServer;
let tools: FakeToolServer;
let engine: BerthQueryEngine;
const lookup = new MapLookup();

beforeAll(async () => {
  [fake, tools] = await Promise.all([startFakeModel(), startFakeTool()]);
  lookup
    .secret('openai', { token: 'sk-test-123' })
    .put(
      'model',
      model('default', { baseUrl: fake.url, apiKey: { secretKeyRef: { name: 'openai', key: 'token' } } }),
    )
    .put('model', model('plain', { baseUrl: fake.url }))
    .put('model', model('weather-model', { baseUrl: fake.url }))
    .put(
      'model',
      model('azure', {
        type: 'azure',
        baseUrl: fake.origin,
        apiVersion: '2024-10-21',
        apiKey: { secretKeyRef: { name: 'openai', key: 'token' } },
      }),
    )
    .put(
      'tool',
      tool('weather', `${tools.url}/weather`, {
        inputSchema: { type: 'object', properties: { city: { type: 'string' } } },
      }),
    )
    .put(
      'tool',
      tool('lookup', `${tools.url}/lookup`, { http: { url: `${tools.url}/lookup`, method: 'GET' } }),
    )
    .put('agent', agent('helper', {}))
    .put('agent', agent('forecaster', { modelRef: { name: 'weather-model' }, tools: [{ name: 'weather' }] }))
    .put(
      'agent',
      agent('looper', { modelRef: { name: 'looping' }, tools: [{ name: 'weather' }], maxTurns: 3 }),
    )
    .put('model', model('looping', { baseUrl: fake.url }))
    .put('agent', agent('writer', { modelRef: { name: 'writer' } }))
    .put('agent', agent('critic', { modelRef: { name: 'critic' } }))
    .put('model', model('writer', { baseUrl: fake.url }))
    .put('model', model('critic', { baseUrl: fake.url }))
    .put(
      'team',
      team('duo', {
        members: [
          { type: 'agent', name: 'writer' },
          { type: 'agent', name: 'critic' },
        ],
        strategy: 'sequential',
      }),
    )
    .put(
      'team',
      team('ring', {
        members: [
          { type: 'agent', name: 'writer' },
          { type: 'agent', name: 'critic' },
        ],
        strategy: 'round-robin',
        maxTurns: 3,
      }),
    )
    .put(
      'team',
      team('outer', {
        members: [
          { type: 'team', name: 'duo' },
          { type: 'agent', name: 'helper' },
        ],
        strategy: 'sequential',
      }),
    )
    .put('team', team('selfish', { members: [{ type: 'team', name: 'selfish' }], strategy: 'sequential' }));
  fake.script('weather-model', {
    toolCall: { name: 'weather', arguments: '{"city":"Oslo"}' },
    reply: (req) => `final: ${req.messages.find((m) => m.role === 'tool')?.content}`,
  });
  fake.script('looping', { toolCall: { name: 'weather', arguments: '{}' }, toolCallForever: true });
  fake.script('writer', {
    reply: (req) => `draft#${req.messages.length}`,
    usage: { prompt: 7, completion: 3 },
  });
  fake.script('critic', {
    reply: (req) =>
      `critique of ${req.messages
        .filter((m) => m.role === 'assistant')
        .map((m) => m.content)
        .join('+')}`,
  });
  engine = createQueryEngine({ lookup, ca: fake.ca, logger: createLogger({ level: 'silent' }) });
});

afterAll(async () => {
  await engine?.close();
  await Promise.all([fake?.close(), tools?.close()]);
});

describe('targets', () => {
  it('model: one chat completion over TLS with the API key from the Secret', async () => {
    const out = await engine.run(query({ type: 'model', name: 'default' }, 'hello there'), run());
    expect(out).toEqual({
      phase: 'done',
      reason: 'Succeeded',
      content: 'echo: hello there',
      tokenUsage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 },
      conversationId: undefined,
    });
    const req = fake.requests.at(-1);
    expect(req?.authorization).toBe('Bearer sk-test-123');
    expect(req?.messages).toEqual([{ role: 'user', content: 'hello there' }]);
  });

  it('model: a message array is passed as the conversation', async () => {
    const input = [
      { role: 'system' as const, content: 'be terse' },
      { role: 'user' as const, content: 'first' },
      { role: 'assistant' as const, content: 'ok' },
      { role: 'user' as const, content: 'second' },
    ];
    const out = await engine.run(query({ type: 'model', name: 'plain' }, input), run());
    expect(out).toMatchObject({ phase: 'done', content: 'echo: second' });
    expect(fake.requests.at(-1)?.messages).toEqual(input);
  });

  it('model: azure type calls the deployment path with api-version and api-key', async () => {
    const out = await engine.run(query({ type: 'model', name: 'azure' }, 'hi azure'), run());
    expect(out).toMatchObject({ phase: 'done', content: 'echo: hi azure' });
    const req = fake.requests.at(-1);
    expect(req?.path).toBe('/openai/deployments/azure/chat/completions');
    expect(req?.headers['api-key']).toBe('sk-test-123');
  });

  it('agent: prompt as system message, default model', async () => {
    const out = await engine.run(query({ type: 'agent', name: 'helper' }, 'who are you?'), run());
    expect(out).toMatchObject({ phase: 'done', content: 'echo: who are you?' });
    expect(fake.requests.at(-1)?.messages).toEqual([
      { role: 'system', content: 'You are helper.' },
      { role: 'user', content: 'who are you?' },
    ]);
  });

  it('agent: calls its tool through function calling and answers with the result', async () => {
    const before = tools.calls.length;
    const out = await engine.run(query({ type: 'agent', name: 'forecaster' }, 'weather in Oslo?'), run());
    expect(out).toMatchObject({ phase: 'done', tokenUsage: { totalTokens: 30 } });
    if (out.phase !== 'done') throw new Error('unreachable');
    expect(JSON.parse(out.content.replace(/^final: /, ''))).toEqual({
      path: '/weather',
      method: 'POST',
      args: { city: 'Oslo' },
    });
    expect(tools.calls.slice(before)).toEqual([
      { method: 'POST', path: '/weather', query: {}, body: { city: 'Oslo' } },
    ]);
    const first = fake.requests.at(-2);
    expect(first?.tools?.map((t) => t.function.name)).toEqual(['weather']);
  });

  it('agent: stops with an error when the model keeps calling tools past maxTurns', async () => {
    const out = await engine.run(query({ type: 'agent', name: 'looper' }, 'loop'), run());
    expect(out.phase).toBe('error');
    expect(out).toMatchObject({
      reason: 'Failed',
      message: expect.stringContaining('maxTurns (3)'),
      tokenUsage: { totalTokens: 45 },
    });
  });

  it('team sequential: each member sees the conversation so far; the answer is the last member’s', async () => {
    const out = await engine.run(query({ type: 'team', name: 'duo' }, 'write a haiku'), run());
    // writer sees system + user (2 messages); critic sees system + user + writer's draft.
    expect(out).toMatchObject({
      phase: 'done',
      content: 'critique of draft#2',
      tokenUsage: { totalTokens: 25 },
    });
    expect(fake.requests.at(-1)?.messages.at(-1)).toEqual({
      role: 'assistant',
      content: 'draft#2',
      name: 'writer',
    });
  });

  it('team round-robin: cycles members for maxTurns turns', async () => {
    const out = await engine.run(query({ type: 'team', name: 'ring' }, 'debate'), run());
    // turns: writer (draft#2), critic (critique of draft#2), writer (sees 4 messages → draft#4)
    expect(out).toMatchObject({ phase: 'done', content: 'draft#4' });
  });

  it('team: nested teams run, and a team containing itself is refused', async () => {
    const nested = await engine.run(query({ type: 'team', name: 'outer' }, 'nest'), run());
    expect(nested).toMatchObject({ phase: 'done', content: 'echo: nest' });
    const cyclic = await engine.run(query({ type: 'team', name: 'selfish' }, 'x'), run());
    expect(cyclic).toMatchObject({
      phase: 'error',
      reason: 'InvalidTarget',
      message: expect.stringContaining('contains itself'),
    });
  });

  it('tool: direct HTTP call with JSON input, and plain text wrapped as {input}', async () => {
    const json = await engine.run(query({ type: 'tool', name: 'weather' }, '{"city":"Rome"}'), run());
    expect(json.phase).toBe('done');
    if (json.phase !== 'done') throw new Error('unreachable');
    expect(JSON.parse(json.content)).toEqual({ path: '/weather', method: 'POST', args: { city: 'Rome' } });
    const text = await engine.run(query({ type: 'tool', name: 'lookup' }, 'just text'), run());
    if (text.phase !== 'done') throw new Error(`unexpected ${JSON.stringify(text)}`);
    expect(JSON.parse(text.content)).toEqual({
      path: '/lookup',
      method: 'GET',
      args: { input: 'just text' },
    });
  });
});

describe('failures become error outcomes', () => {
  it('malformed input', async () => {
    const bad = query({ type: 'model', name: 'plain' }, [{ role: 'robot', content: 'x' }] as never);
    expect(await engine.run(bad, run())).toMatchObject({
      phase: 'error',
      reason: 'InvalidQuery',
      message: expect.stringContaining('spec.input'),
    });
    const empty = query({ type: 'model', name: 'plain' }, []);
    expect(await engine.run(empty, run())).toMatchObject({
      phase: 'error',
      reason: 'InvalidQuery',
      message: expect.stringContaining('spec.input'),
    });
    const never = query({ type: 'model', name: 'plain' }, 'x', { timeout: 'soon' });
    expect(await engine.run(never, run())).toMatchObject({
      phase: 'error',
      reason: 'InvalidQuery',
      message: expect.stringContaining('spec.timeout'),
    });
  });

  it('missing target, model, tool and API key secret are named', async () => {
    const cases: Array<[Parameters<typeof query>[0], string]> = [
      [{ type: 'agent', name: 'ghost' }, 'Agent ghost not found'],
      [{ type: 'model', name: 'ghost' }, 'Model ghost not found'],
      [{ type: 'tool', name: 'ghost' }, 'Tool ghost not found'],
    ];
    for (const [target, msg] of cases) {
      expect(await engine.run(query(target, 'x'), run())).toMatchObject({
        phase: 'error',
        reason: 'TargetNotFound',
        message: expect.stringContaining(msg),
      });
    }
    lookup.put(
      'model',
      model('nokey', { baseUrl: fake.url, apiKey: { secretKeyRef: { name: 'missing', key: 'k' } } }),
    );
    expect(await engine.run(query({ type: 'model', name: 'nokey' }, 'x'), run())).toMatchObject({
      phase: 'error',
      reason: 'InvalidTarget',
      message: 'Model nokey: API key Secret missing key k does not exist',
    });
  });

  it('what a target references is missing: InvalidTarget, naming it', async () => {
    lookup
      .put('agent', agent('modelless', { modelRef: { name: 'ghost' } }))
      .put('agent', agent('toolless', { tools: [{ name: 'ghost' }] }))
      .put('team', team('hollow', { members: [{ type: 'agent', name: 'ghost' }], strategy: 'sequential' }))
      .put('team', team('shell', { members: [{ type: 'team', name: 'ghost' }], strategy: 'sequential' }));
    const cases: Array<[Parameters<typeof query>[0], string]> = [
      [{ type: 'agent', name: 'modelless' }, 'Agent modelless: Model ghost not found'],
      [{ type: 'agent', name: 'toolless' }, 'Agent toolless: Tool ghost not found'],
      [{ type: 'team', name: 'hollow' }, 'Agent ghost not found'],
      [{ type: 'team', name: 'shell' }, 'Team ghost not found'],
    ];
    for (const [target, msg] of cases)
      expect(await engine.run(query(target, 'x'), run())).toMatchObject({
        phase: 'error',
        reason: 'InvalidTarget',
        message: expect.stringContaining(msg),
      });
    expect(await engine.run(query({ type: 'team', name: 'ghost' }, 'x'), run())).toMatchObject({
      reason: 'TargetNotFound',
      message: expect.stringContaining('Team ghost not found'),
    });
  });

  it('a tool target that fails is ToolError; an unknown target type InvalidQuery', async () => {
    lookup.put('tool', tool('exploding', `${tools.url}/fail`));
    expect(await engine.run(query({ type: 'tool', name: 'exploding' }, 'x'), run())).toMatchObject({
      phase: 'error',
      reason: 'ToolError',
      message: expect.stringContaining('500'),
    });
    const odd = query({ type: 'robot' as never, name: 'x' }, 'x');
    expect(await engine.run(odd, run())).toMatchObject({
      phase: 'error',
      reason: 'InvalidQuery',
      message: expect.stringContaining('spec.target.type'),
    });
  });

  it('a Secret that did not opt in to engine use is an error that says so, and nothing is sent', async () => {
    const before = fake.requests.length;
    lookup
      .secret('unlabelled', { k: 'sk-never-sent-0a1b2c' }, NS, {})
      .put(
        'model',
        model('unopted', { baseUrl: fake.url, apiKey: { secretKeyRef: { name: 'unlabelled', key: 'k' } } }),
      );
    const out = await engine.run(query({ type: 'model', name: 'unopted' }, 'x'), run());
    expect(out).toEqual({
      phase: 'error',
      reason: 'InvalidTarget',
      message:
        'Model unopted: API key: secret unlabelled is not usable by the engine: add label berth.dev/usage=engine',
    });
    expect(fake.requests.length).toBe(before);
    expect(JSON.stringify(out)).not.toContain('sk-never-sent');
  });

  it('invalid model URL is refused before any call', async () => {
    const before = fake.requests.length;
    lookup.put('model', model('insecure', { baseUrl: fake.url.replace('https:', 'http:') }));
    const out = await engine.run(query({ type: 'model', name: 'insecure' }, 'x'), run());
    expect(out).toMatchObject({
      phase: 'error',
      reason: 'InvalidTarget',
      message: expect.stringContaining('must be https://'),
    });
    expect(fake.requests.length).toBe(before);
  });

  it('a model behind an untrusted certificate fails with the TLS reason', async () => {
    const untrusting = createQueryEngine({
      lookup,
      logger: createLogger({ level: 'silent' }),
      maxRetries: 0,
    });
    try {
      const out = await untrusting.run(query({ type: 'model', name: 'plain' }, 'x'), run());
      expect(out).toMatchObject({
        phase: 'error',
        reason: 'ModelError',
        message: expect.stringMatching(/certificate|self.signed|issuer/i),
      });
    } finally {
      await untrusting.close();
    }
  });
});
