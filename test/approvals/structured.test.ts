/**
 * Structured answers and /compat/v1 (issue 30 items 5 and 6) on the real platform: an Agent's
 * outputSchema against the fake model — valid, invalid then repaired, invalid twice; the request's
 * response_format passed through to a model target; a streaming SDK client sees the `berth`
 * input_required chunk while the query waits and the answer after the decision; a non-streaming
 * call keeps waiting through the pause.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kinds, type Query } from '../../pkg/api/index.ts';
import { type Platform, startPlatform } from '../compat/platform.ts';
import { agentWithModel, createQuery, dangerTool, decide, ended, obj, waitQuery } from './support.ts';

let p: Platform;
let sdk: OpenAI;

const schema = {
  type: 'object',
  properties: { city: { type: 'string' }, temp: { type: 'number' } },
  required: ['city', 'temp'],
  additionalProperties: false,
};
const requestsOf = (model: string) => p.fake.requests.filter((r) => r.model === model);

/** Answers in turn: the n-th request for the model gets replies[n] (the last one after that). */
const inTurn = (model: string, replies: string[]) => () =>
  replies[Math.min(requestsOf(model).length - 1, replies.length - 1)] as string;

beforeAll(async () => {
  p = await startPlatform('structured');
  sdk = new OpenAI({ baseURL: `${p.api.url}/compat/v1`, apiKey: 'unused', maxRetries: 0 });
  await p.apply(dangerTool(p));
});

afterAll(async () => {
  await p?.stop();
});

describe('Agent.spec.outputSchema', () => {
  it('valid JSON: asked with response_format json_schema, answered as given', async () => {
    await agentWithModel(p, 's-valid', { outputSchema: schema });
    p.fake.script('s-valid', { reply: '{"city":"Paris","temp":21.5}' });
    await createQuery(p, 'q-valid', { input: 'weather?', target: { type: 'agent', name: 's-valid' } });
    const q = await waitQuery(p, 'q-valid', ended);
    expect(q.status?.phase).toBe('done');
    expect(JSON.parse(q.status?.response?.content ?? '')).toEqual({ city: 'Paris', temp: 21.5 });
    const [req] = requestsOf('s-valid');
    expect(req?.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { name: 's-valid', schema },
    });
    expect(req?.messages[0]?.content).toContain('satisfies this JSON Schema');
  });

  it('invalid, then repaired in the one repair round (a code fence tolerated)', async () => {
    await agentWithModel(p, 's-repair', { outputSchema: schema });
    p.fake.script('s-repair', {
      reply: inTurn('s-repair', ['{"city": 7}', '```json\n{"city":"Oslo","temp":-3}\n```']),
    });
    await createQuery(p, 'q-repair', { input: 'weather?', target: { type: 'agent', name: 's-repair' } });
    const q = await waitQuery(p, 'q-repair', ended);
    expect(q.status?.phase).toBe('done');
    expect(q.status?.response?.content).toBe('{"city":"Oslo","temp":-3}');
    const second = requestsOf('s-repair')[1];
    expect(second?.messages.at(-1)?.content).toMatch(
      /must have required property 'temp'; \/city: must be string/,
    );
  });

  it('invalid twice → error InvalidOutput naming the violation', async () => {
    await agentWithModel(p, 's-broken', { outputSchema: schema });
    p.fake.script('s-broken', { reply: 'It is sunny in Rome.' });
    await createQuery(p, 'q-broken', { input: 'weather?', target: { type: 'agent', name: 's-broken' } });
    const q = await waitQuery(p, 'q-broken', ended);
    expect(q.status?.phase).toBe('error');
    expect(q.status?.conditions?.find((c) => c.type === 'Completed')?.reason).toBe('InvalidOutput');
    expect(q.status?.message).toMatch(
      /the answer of Agent s-broken does not satisfy spec.outputSchema of Agent s-broken after one repair round: the answer is not JSON/,
    );
    expect(requestsOf('s-broken')).toHaveLength(2);
  });

  it('an outputSchema the validator refuses (nested quantifiers) → InvalidTarget, not a stuck controller', async () => {
    await agentWithModel(p, 's-redos', { outputSchema: { type: 'string', pattern: '^(a+)+$' } });
    p.fake.script('s-redos', { reply: `"${'a'.repeat(40)}!"` });
    await createQuery(p, 'q-redos', { input: 'x', target: { type: 'agent', name: 's-redos' } });
    const q = await waitQuery(p, 'q-redos', ended);
    expect(q.status?.conditions?.find((c) => c.type === 'Completed')?.reason).toBe('InvalidTarget');
    expect(q.status?.message).toMatch(/nests quantifiers/);
  });
});

describe('/compat/v1', () => {
  it('response_format passes through to a model target and is enforced', async () => {
    await p.apply(obj('Model', 's-plain', p.ns, { type: 'openai', model: 's-plain', baseUrl: p.fake.url }));
    p.fake.script('s-plain', { reply: inTurn('s-plain', ['{"city":"Lima","temp":18}']) });
    const res = await sdk.chat.completions.create({
      model: 'model/s-plain',
      messages: [{ role: 'user', content: 'weather in Lima' }],
      response_format: { type: 'json_schema', json_schema: { name: 'weather', schema } },
    });
    expect(JSON.parse(res.choices[0]?.message.content ?? '')).toEqual({ city: 'Lima', temp: 18 });
    expect(requestsOf('s-plain')[0]?.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'weather', schema },
    });
  });

  it('a response_format schema the engine could not check is a 400 naming the parameter', async () => {
    const bad = await fetch(`${p.api.url}/compat/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'model/s-plain',
        messages: [{ role: 'user', content: 'x' }],
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'w', schema: { $ref: 'http://169.254.169.254/x' } },
        },
      }),
    });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatchObject({ param: 'response_format.json_schema.schema' });
    const noSchema = await fetch(`${p.api.url}/compat/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'model/s-plain',
        messages: [{ role: 'user', content: 'x' }],
        response_format: { type: 'json_schema' },
      }),
    });
    expect(noSchema.status).toBe(400);
  });

  it('a streaming client sees the berth input_required chunk, then the answer after the decision', async () => {
    await agentWithModel(p, 's-stream', { tools: [{ name: 'danger' }] });
    p.fake.script('s-stream', {
      toolCall: { name: 'danger', arguments: '{"target":"stream"}' },
      reply: 'all done now',
    });
    const stream = await sdk.chat.completions.create({
      model: 'agent/s-stream',
      messages: [{ role: 'user', content: 'drop stream' }],
      stream: true,
    });
    let text = '';
    let berth:
      | { type?: string; pendingApprovals?: Array<{ id: string; tool: string }>; query?: string }
      | undefined;
    const seen: string[] = [];
    for await (const chunk of stream) {
      const ext = (chunk as unknown as { berth?: typeof berth }).berth;
      if (ext) {
        seen.push(ext.type ?? '');
        if (ext.type === 'input_required') {
          berth = ext;
          const id = ext.pendingApprovals?.[0]?.id;
          const res = await decide(p.api.url, p.ns, ext.query ?? '', { id, decision: 'approve' });
          expect(res.status).toBe(200);
        }
      }
      text += chunk.choices[0]?.delta?.content ?? '';
    }
    expect(berth?.pendingApprovals?.[0]?.tool).toBe('danger');
    expect(seen).toEqual(['input_required', 'resumed']);
    expect(text).toBe('all done now');
  });

  it('a non-streaming call keeps waiting through the pause and answers after the decision', async () => {
    await agentWithModel(p, 's-wait', { tools: [{ name: 'danger' }] });
    p.fake.script('s-wait', {
      toolCall: { name: 'danger', arguments: '{"target":"wait"}' },
      reply: 'waited',
    });
    const pending = sdk.chat.completions.create({
      model: 'agent/s-wait',
      messages: [{ role: 'user', content: 'drop wait' }],
    });
    const waitingQuery = await new Promise<Query>((resolve) => {
      const tick = setInterval(() => {
        const q = (p.cache.list(Kinds.Query, p.ns) ?? []).find(
          (x) => x.spec.target.name === 's-wait' && x.status?.phase === 'input-required',
        );
        if (q) {
          clearInterval(tick);
          resolve(q);
        }
      }, 20);
    });
    const id = waitingQuery.status?.pendingApprovals?.[0]?.id;
    await decide(p.api.url, p.ns, waitingQuery.metadata.name, { id, decision: 'approve' });
    const res = await pending;
    expect(res.choices[0]?.message.content).toBe('waited');
    expect(res.id).toBe(waitingQuery.metadata.name);
  });
});
