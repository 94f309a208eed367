/**
 * The built-in evaluator over real HTTP: rules, the judge asking the demo Model through the engine's
 * model clients (offline), and what the contract says to refuse with a 4xx.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_VERSION, DEMO_MODEL, type Model } from '../api/index.ts';
import type { ResourceLookup } from '../engine/contract.ts';
import { createLogger } from '../log/index.ts';
import { type RunningEvaluator, startBuiltinEvaluatorFor } from './server.ts';

const demo = {
  apiVersion: API_VERSION,
  kind: 'Model',
  metadata: { name: DEMO_MODEL.name, namespace: 'ns' },
  spec: DEMO_MODEL.spec,
} as Model;
const lookup: ResourceLookup = {
  agent: () => undefined,
  team: () => undefined,
  model: (ns, name) => (ns === 'ns' && name === 'demo' ? demo : undefined),
  tool: () => undefined,
  memory: () => undefined,
  secretValue: () => undefined,
};
let ev: RunningEvaluator;

beforeAll(async () => {
  ev = await startBuiltinEvaluatorFor({
    port: 0,
    logger: createLogger({ level: 'silent' }),
    lookup,
    namespace: 'ns',
  });
});
afterAll(() => ev?.close());

const evaluate = (body: unknown, type = 'application/json') =>
  fetch(`${ev.url}/evaluate`, {
    method: 'POST',
    headers: { 'content-type': type },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

describe('the built-in evaluator', () => {
  it('scores by rule', async () => {
    const res = await evaluate({
      type: 'direct',
      input: 'What is the capital of France?',
      output: 'It is Paris.',
      parameters: { mode: 'contains', expected: 'Paris' },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      score: 1,
      passed: true,
      reasoning: 'the output contains "Paris"',
    });
    const miss = await evaluate({
      type: 'direct',
      input: 'q',
      output: 'Lyon',
      parameters: { expected: 'Paris' },
    });
    expect(await miss.json()).toMatchObject({ score: 0, passed: false });
  });

  it('asks the demo Model to judge, offline', async () => {
    const res = await evaluate({
      type: 'query',
      input: 'Hello',
      output: 'Hi there!',
      parameters: { mode: 'llm', criteria: 'friendly' },
    });
    expect(res.status).toBe(200);
    const v = await res.json();
    expect(v).toMatchObject({ score: 1, passed: true, metrics: { threshold: 0.5 } });
    expect(v.reasoning).toContain('[demo model]');
    const empty = await evaluate({ type: 'direct', input: 'Hello', output: '', parameters: { mode: 'llm' } });
    expect(await empty.json()).toMatchObject({ score: 0, passed: false });
  });

  it('refuses with a 4xx what no retry can fix: unknown mode, missing Model, bad bodies', async () => {
    const cases: Array<[unknown, number, RegExp]> = [
      [{ type: 'direct', input: 'a', output: 'b', parameters: { mode: 'vibes' } }, 400, /unknown mode/],
      [
        { type: 'direct', input: 'a', output: 'b', parameters: { mode: 'llm', model: 'gone' } },
        400,
        /not found/,
      ],
      [
        { type: 'direct', input: 'a', output: 'b', parameters: { mode: 'regex', expected: '(' } },
        400,
        /regular/,
      ],
      [{ type: 'direct', input: 1, output: 'b' }, 400, /input/],
      [{ type: 'direct', input: 'a', output: 'b', parameters: { mode: 1 } }, 400, /parameters/],
      ['{"type": "direct", "input": ', 400, /JSON/i],
      [
        JSON.parse(
          '{"__proto__": {"x": 1}, "type": "direct", "input": "a", "output": "a", "parameters": {"expected": "a"}}',
        ),
        200,
        /equals/,
      ],
    ];
    for (const [body, status, message] of cases) {
      const res = await evaluate(body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(await res.text()).toMatch(message);
    }
    expect((await evaluate('{}', 'text/plain')).status).toBe(415);
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    expect((await evaluate(`{"type":"direct","input":"a","output":"b","parameters":${deep}}`)).status).toBe(
      400,
    );
    const huge = await evaluate({ type: 'direct', input: 'a', output: 'x'.repeat(5 * 1024 * 1024) });
    expect(huge.status).toBe(413);
  });

  it('answers a GET of /evaluate (the reachability check) with 405 and health at /health', async () => {
    const res = await fetch(`${ev.url}/evaluate`);
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect((await fetch(`${ev.url}/health`)).status).toBe(200);
  });
});
