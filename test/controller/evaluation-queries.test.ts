/**
 * Query evaluations and the LLM-as-judge mode on the real control plane: the controller with the
 * real query engine against the fake model, the reference evaluator (rules, and a judge asking the
 * same fake model), everything applied with kubectl as users would.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Evaluation, Kinds } from '../../pkg/api/index.ts';
import { type RunningController, startController } from '../../pkg/controller/index.ts';
import { createQueryEngine } from '../../pkg/engine/index.ts';
import { createLogger } from '../../pkg/log/index.ts';
import { type ReferenceEvaluator, startReferenceEvaluator } from '../evaluator/server.ts';
import { type FakeModelServer, startFakeModel } from '../fixtures/fake-model.ts';
import { createNamespace, kubeConfig, kubectl } from '../support/kube.ts';

let ns: string;
let ctl: RunningController;
let fake: FakeModelServer;
let evaluator: ReferenceEvaluator;
let engine: ReturnType<typeof createQueryEngine> | undefined;

const waitEval = (name: string, pred: (e: Evaluation | undefined) => boolean, timeoutMs = 20_000) =>
  ctl.caches.waitFor(Kinds.Evaluation, ns, name, (o) => pred(o as Evaluation | undefined), {
    timeoutMs,
  }) as Promise<Evaluation | undefined>;
const phaseIs = (phase: string) => (e: Evaluation | undefined) => e?.status?.phase === phase;
const apply = async (yaml: string) => {
  const r = await kubectl(['apply', '-n', ns, '-f', '-'], yaml);
  expect(r.code, r.stderr).toBe(0);
};
const model = (name: string, providerModel: string) => `
apiVersion: berth.dev/v1alpha1
kind: Model
metadata: {name: ${name}}
spec: {type: openai, model: ${providerModel}, baseUrl: "${fake.url}"}
---`;
const queryAndEvaluation = (name: string, modelName: string, evaluator = 'rules') => `
apiVersion: berth.dev/v1alpha1
kind: Query
metadata: {name: ${name}}
spec: {input: "What is the capital of France?", target: {type: model, name: ${modelName}}}
---
apiVersion: berth.dev/v1alpha1
kind: Evaluation
metadata: {name: eval-${name}}
spec:
  type: query
  evaluator: {name: ${evaluator}}
  config: {queryRef: {name: ${name}}}
`;

beforeAll(async () => {
  [ns, fake] = await Promise.all([createNamespace('ctl-evalq'), startFakeModel()]);
  fake.script('capital', { reply: 'Paris' });
  fake.script('slow-capital', { reply: 'Paris', delayMs: 4000 });
  fake.script('broken', { fail: { status: 500, times: 1000 } });
  // The judge rates by whether the output it is shown names the right city.
  fake.script('judge', {
    reply: (req) =>
      /OUTPUT: .*Paris/.test(req.messages.at(-1)?.content ?? '')
        ? '{"score": 0.9, "reasoning": "names the capital"}'
        : 'I would give this 0.1: wrong city',
  });
  evaluator = await startReferenceEvaluator({ judge: { modelUrl: fake.url, ca: fake.ca } });
  ctl = await startController({
    kc: kubeConfig('controller'),
    namespace: ns,
    engine: (lookup) => {
      engine = createQueryEngine({
        lookup,
        ca: fake.ca,
        maxRetries: 0,
        logger: createLogger({ level: 'silent' }),
      });
      return engine;
    },
    leaderElection: false,
    probes: false,
    metrics: false,
    // Long enough for a Query applied beside its Evaluation to reach the cache on a loaded machine.
    evaluation: { missingGraceMs: 3000 },
    logger: createLogger({ level: 'silent' }),
  });
  await apply(`${model('ok', 'capital')}${model('slow', 'slow-capital')}${model('bad', 'broken')}
apiVersion: berth.dev/v1alpha1
kind: Evaluator
metadata: {name: rules}
spec:
  address: {value: "${evaluator.url}"}
  parameters: {mode: exact, expected: Paris}
---
apiVersion: berth.dev/v1alpha1
kind: Evaluator
metadata: {name: llm}
spec:
  description: LLM-as-judge
  address: {value: "${evaluator.url}"}
  parameters: {mode: llm, model: judge}
`);
});

afterAll(async () => {
  await ctl?.stop();
  await engine?.close();
  await Promise.all([evaluator?.close(), fake?.close()]);
});

describe('query evaluations', () => {
  it("scores a finished Query's input and response", async () => {
    await apply(queryAndEvaluation('capital', 'ok'));
    const done = await waitEval('eval-capital', phaseIs('done'));
    expect(done?.status).toMatchObject({ score: 1, passed: true });
    const call = evaluator.requests.find((r) => r.body.query?.name === 'capital');
    expect(call?.body).toMatchObject({
      type: 'query',
      input: 'What is the capital of France?',
      output: 'Paris',
      parameters: { mode: 'exact', expected: 'Paris' },
      query: { name: 'capital', namespace: ns, target: { type: 'model', name: 'ok' }, response: 'Paris' },
    });
    const table = await kubectl(['get', 'evaluations', '-n', ns]);
    expect(table.stdout).toMatch(/eval-capital\s+query\s+rules\s+done\s+1\s+true/);
  });

  it('waits, pending with a message, while the Query runs', async () => {
    await apply(queryAndEvaluation('slowpoke', 'slow'));
    const waiting = await waitEval('eval-slowpoke', (e) => !!e?.status?.message);
    expect(waiting?.status).toMatchObject({
      phase: 'pending',
      message: 'waiting for Query slowpoke to finish',
    });
    expect(waiting?.status?.conditions?.[0]).toMatchObject({ status: 'False', reason: 'Waiting' });
    const done = await waitEval('eval-slowpoke', phaseIs('done'));
    expect(done?.status).toMatchObject({ score: 1, passed: true });
    expect(done?.status?.message).toBeUndefined();
  });

  it('errors when the Query failed or does not exist', async () => {
    await apply(queryAndEvaluation('broken', 'bad'));
    await apply(`
apiVersion: berth.dev/v1alpha1
kind: Evaluation
metadata: {name: eval-nothing}
spec: {type: query, evaluator: {name: rules}, config: {queryRef: {name: nothing}}}
`);
    const failed = await waitEval('eval-broken', phaseIs('error'));
    expect(failed?.status?.message).toMatch(/^Query broken ended error: .*HTTP 500/);
    const missing = await waitEval('eval-nothing', phaseIs('error'));
    expect(missing?.status?.message).toBe('Query nothing not found');
  });
});

describe('LLM-as-judge', () => {
  it('scores with the judge model: a right answer passes, a wrong one fails', async () => {
    await apply(`
apiVersion: berth.dev/v1alpha1
kind: Evaluation
metadata: {name: judged-right}
spec:
  evaluator: {name: llm}
  config: {input: "What is the capital of France?", output: "Paris"}
---
apiVersion: berth.dev/v1alpha1
kind: Evaluation
metadata: {name: judged-wrong}
spec:
  evaluator: {name: llm}
  config: {input: "What is the capital of France?", output: "Lyon"}
`);
    const right = await waitEval('judged-right', phaseIs('done'));
    expect(right?.status).toMatchObject({ score: 0.9, passed: true, reasoning: 'names the capital' });
    const wrong = await waitEval('judged-wrong', phaseIs('done'));
    expect(wrong?.status).toMatchObject({
      score: 0.1,
      passed: false,
      reasoning: 'I would give this 0.1: wrong city',
    });
    const asked = fake.requests.filter((r) => r.model === 'judge').map((r) => r.messages.at(-1)?.content);
    expect(asked).toEqual(
      expect.arrayContaining([
        expect.stringContaining('OUTPUT: Paris'),
        expect.stringContaining('OUTPUT: Lyon'),
      ]),
    );
  });
});
