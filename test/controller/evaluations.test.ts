/**
 * Direct Evaluations on the real control plane: the controller in-process with the API service on
 * its cache, the reference evaluator over HTTP, a real `berth broker` for events and spans, and
 * kubectl for what users see. Phases, score and verdict, cancel mid-call, deletion, retries when the
 * evaluator is down, errors, timeouts and the schema's refusal of incomplete Evaluations.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Evaluation, type Evaluator, Kinds } from '../../pkg/api/index.ts';
import { type RunningController, startController } from '../../pkg/controller/index.ts';
import { createLogger } from '../../pkg/log/index.ts';
import { getJson, startTestBroker, type TestBroker } from '../engine/broker.ts';
import { type ReferenceEvaluator, startReferenceEvaluator } from '../evaluator/server.ts';
import { client, startService, type TestService } from '../gateway/support.ts';
import { createNamespace, kubeConfig, kubectl } from '../support/kube.ts';
import { until } from './support.ts';

let ns: string;
let ctl: RunningController;
let api: TestService;
let http: ReturnType<typeof client>;
let broker: TestBroker;
let judge: ReferenceEvaluator;
let flaky: ReferenceEvaluator;

const waitEval = (name: string, pred: (e: Evaluation | undefined) => boolean, timeoutMs = 20_000) =>
  ctl.caches.waitFor(Kinds.Evaluation, ns, name, (o) => pred(o as Evaluation | undefined), {
    timeoutMs,
  }) as Promise<Evaluation | undefined>;
const phaseIs = (phase: string) => (e: Evaluation | undefined) => e?.status?.phase === phase;
const apply = async (yaml: string) => {
  const r = await kubectl(['apply', '-n', ns, '-f', '-'], yaml);
  expect(r.code, r.stderr).toBe(0);
};
const direct = (name: string, evaluator: string, output: string, params = '{}', extra = '') => `
apiVersion: berth.dev/v1alpha1
kind: Evaluation
metadata: {name: ${name}}
spec:
  type: direct
  evaluator: {name: ${evaluator}, parameters: ${params}}
  config: {input: "What is the capital of France?", output: "${output}"}
${extra}`;

beforeAll(async () => {
  [ns, judge, flaky, broker] = await Promise.all([
    createNamespace('ctl-eval'),
    startReferenceEvaluator(),
    startReferenceEvaluator(),
    startTestBroker(),
  ]);
  ctl = await startController({
    kc: kubeConfig('controller'),
    namespace: ns,
    brokerUrl: broker.url,
    leaderElection: false,
    probes: false,
    metrics: false,
    evaluation: { missingGraceMs: 3000, retryInitialMs: 100, retryMaxMs: 400 },
    logger: createLogger({ level: 'silent' }),
  });
  api = await startService({ namespace: ns, cache: ctl.caches, logger: createLogger({ level: 'silent' }) });
  http = client(api.url);
  // The address has a path: calls go to <address>/evaluate, keeping it.
  await apply(`
apiVersion: berth.dev/v1alpha1
kind: Evaluator
metadata: {name: judge}
spec:
  description: contains-rule judge
  address: {value: "${judge.url}/v1"}
  parameters: {mode: contains, expected: Paris}
---
apiVersion: berth.dev/v1alpha1
kind: Evaluator
metadata: {name: flaky}
spec:
  address: {value: "${flaky.url}"}
  parameters: {mode: exact, expected: Paris}
`);
});

afterAll(async () => {
  await api?.close();
  await ctl?.stop();
  await Promise.all([judge?.close(), flaky?.close(), broker?.stop()]);
});

describe('Evaluator', () => {
  it('resolves its address into status like a Memory', async () => {
    const ev = (await ctl.caches.waitFor(Kinds.Evaluator, ns, 'judge', (o) => !!o?.status?.phase, {
      timeoutMs: 15_000,
    })) as Evaluator;
    expect(ev.status).toMatchObject({ phase: 'ready', lastResolvedAddress: `${judge.url}/v1` });
    expect(ev.status?.conditions?.[0]).toMatchObject({ type: 'Ready', status: 'True' });
    const table = await kubectl(['get', 'evaluators', '-n', ns]);
    expect(table.stdout).toMatch(new RegExp(`judge\\s+${judge.url}/v1\\s+ready`));
  });
});

describe('direct evaluations', () => {
  it("POST with the spec's body ends done with a score; kubectl shows PHASE, SCORE and PASSED", async () => {
    const body = {
      name: 'capital',
      type: 'direct',
      evaluator: { name: 'judge' },
      config: { input: 'What is the capital of France?', output: 'It is Paris.' },
    };
    const created = await http.post(`/v1/namespaces/${ns}/evaluations`, body);
    expect(created.status, created.text).toBe(201);
    await apply(direct('wrong', 'judge', 'Lyon'));
    const done = await waitEval('capital', phaseIs('done'));
    expect(done?.status).toMatchObject({ score: 1, passed: true, reasoning: 'the output contains "Paris"' });
    expect(done?.status?.conditions?.[0]).toMatchObject({
      type: 'Completed',
      status: 'True',
      reason: 'Succeeded',
    });
    expect(Date.parse(done?.status?.completionTime ?? '')).toBeGreaterThanOrEqual(
      Date.parse(done?.status?.startTime ?? ''),
    );
    const wrong = await waitEval('wrong', phaseIs('done'));
    expect(wrong?.status).toMatchObject({ score: 0, passed: false });

    const call = judge.requests.find((r) => r.body.output === 'It is Paris.');
    expect(call?.path).toBe('/v1/evaluate');
    expect(call?.body).toEqual({
      ...body.config,
      type: 'direct',
      parameters: { mode: 'contains', expected: 'Paris' },
    });

    const table = await kubectl(['get', 'evaluations', '-n', ns]);
    expect(table.stdout.split('\n')[0]).toMatch(/NAME\s+TYPE\s+EVALUATOR\s+PHASE\s+SCORE\s+PASSED\s+AGE/);
    expect(table.stdout).toMatch(/capital\s+direct\s+judge\s+done\s+1\s+true/);
    expect(table.stdout).toMatch(/wrong\s+direct\s+judge\s+done\s+0\s+false/);
  });

  it('records EvaluationStart/Complete events under its name and one trace in the broker', async () => {
    const events = await until('the evaluation events', async () => {
      const page = await getJson<{ items: Array<{ reason: string; data: Record<string, string> }> }>(
        `${broker.url}/events/capital`,
      );
      return page.items.length >= 2 ? page.items : undefined;
    });
    expect(events.map((e) => e.reason)).toEqual(['EvaluationStart', 'EvaluationComplete']);
    expect(events[1]?.data).toMatchObject({
      queryId: 'capital',
      evaluationName: 'capital',
      evaluationNamespace: ns,
      evaluator: 'judge',
      score: '1',
      passed: 'true',
    });
    const spans = await until('the evaluation trace', async () => {
      const t = await getJson<{ items: Array<{ spans: Array<{ name: string }> }> }>(
        `${broker.url}/traces?session_id=capital`,
      );
      const names = t.items.flatMap((i) => i.spans.map((s) => s.name));
      return names.length >= 2 ? names : undefined;
    });
    expect(spans.sort()).toEqual(['evaluation', 'evaluator.call']);
  });

  it('PATCH …/cancel during a slow call aborts it and ends canceled within a second', async () => {
    await apply(direct('slow', 'judge', 'Paris', '{delayMs: "60000"}'));
    await waitEval('slow', phaseIs('running'));
    const patched = await http.patch(`/v1/namespaces/${ns}/evaluations/slow/cancel`, undefined);
    expect(patched.status, patched.text).toBe(200);
    const asked = Date.now();
    const canceled = await waitEval('slow', phaseIs('canceled'));
    expect(Date.now() - asked).toBeLessThan(1000);
    expect(canceled?.status).toMatchObject({ message: 'evaluation canceled' });
    expect(canceled?.status?.conditions?.[0]?.reason).toBe('Canceled');
    const call = judge.requests.find((r) => r.body.parameters?.delayMs === '60000');
    await until('the evaluator to see the call dropped', () => call?.aborted);
    const events = await until('the canceled event', async () => {
      const page = await getJson<{ items: Array<{ reason: string }> }>(`${broker.url}/events/slow`);
      return page.items.length >= 2 ? page.items.map((e) => e.reason) : undefined;
    });
    expect(events).toEqual(['EvaluationStart', 'EvaluationCanceled']);
  });

  it('deleting an Evaluation aborts its call', async () => {
    await apply(direct('doomed', 'judge', 'Paris', '{delayMs: "60001"}'));
    await waitEval('doomed', phaseIs('running'));
    const del = await kubectl(['delete', 'evaluation', 'doomed', '-n', ns, '--wait=false']);
    expect(del.code, del.stderr).toBe(0);
    const call = judge.requests.find((r) => r.body.parameters?.delayMs === '60001');
    await until('the evaluator to see the call dropped', () => call?.aborted);
    expect(ctl.evaluations?.runs.size).toBe(0);
  });

  it('an evaluator that is down is retried (status says so) until it is back', async () => {
    await flaky.stop();
    await apply(direct('down', 'flaky', 'Paris'));
    const retrying = await waitEval('down', (e) => /retrying/.test(e?.status?.message ?? ''));
    expect(retrying?.status?.phase).toBe('running');
    expect(retrying?.status?.message).toMatch(/evaluator call \d+ failed \(.*ECONNREFUSED.*\); retrying/);
    await flaky.start();
    const done = await waitEval('down', phaseIs('done'));
    expect(done?.status).toMatchObject({ score: 1, passed: true });
    expect(done?.status?.message).toBeUndefined();
  });

  it('retries a 5xx answer and a dropped connection', async () => {
    const before = flaky.requests.length;
    flaky.failNext(1, 503);
    await apply(direct('five-hundred', 'flaky', 'Paris'));
    await waitEval('five-hundred', phaseIs('done'));
    flaky.dropNext(1);
    await apply(direct('dropped', 'flaky', 'Paris'));
    await waitEval('dropped', phaseIs('done'));
    expect(flaky.requests.length - before).toBe(4);
  });

  it('ends in error on a 4xx, after spec.timeout, and when the Evaluator is missing', async () => {
    await apply(direct('bad-mode', 'judge', 'Paris', '{mode: sideways}'));
    await apply(direct('too-slow', 'judge', 'Paris', '{delayMs: "60002"}', '  timeout: 1s'));
    await apply(direct('orphan', 'nobody', 'Paris'));
    const bad = await waitEval('bad-mode', phaseIs('error'));
    expect(bad?.status?.message).toMatch(/^evaluator call failed: HTTP 400: .*unknown mode sideways/);
    const slow = await waitEval('too-slow', phaseIs('error'));
    expect(slow?.status?.message).toBe('the evaluator did not answer within 1s (1 attempt)');
    const orphan = await waitEval('orphan', phaseIs('error'));
    expect(orphan?.status?.message).toBe('Evaluator nobody not found');
    expect(orphan?.status?.conditions?.[0]?.reason).toBe('Failed');
  });

  it('the schema refuses a direct evaluation without input and a query evaluation without queryRef', async () => {
    const noInput = await kubectl(
      ['apply', '-n', ns, '-f', '-'],
      'apiVersion: berth.dev/v1alpha1\nkind: Evaluation\nmetadata: {name: no-input}\nspec: {type: direct, evaluator: {name: judge}, config: {output: Paris}}\n',
    );
    expect(noInput.code).not.toBe(0);
    expect(noInput.stderr).toContain('a direct evaluation needs config.input');
    const noRef = await kubectl(
      ['apply', '-n', ns, '-f', '-'],
      'apiVersion: berth.dev/v1alpha1\nkind: Evaluation\nmetadata: {name: no-ref}\nspec: {type: query, evaluator: {name: judge}, config: {}}\n',
    );
    expect(noRef.code).not.toBe(0);
    expect(noRef.stderr).toContain('a query evaluation needs config.queryRef.name');
    const viaApi = await http.post(`/v1/namespaces/${ns}/evaluations`, {
      name: 'no-input',
      evaluator: { name: 'judge' },
      config: { output: 'Paris' },
    });
    expect(viaApi.status).toBe(400);
    expect(viaApi.body.error.details.issues.map((i: { path: string }) => i.path)).toEqual(['config.input']);
  });
});
