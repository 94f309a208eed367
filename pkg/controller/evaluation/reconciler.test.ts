/**
 * The Evaluation reconciler against the FakeClient, with a scripted evaluator fetch: phases and
 * status fields, running writes, retries, cancel, deletion, waiting for a Query, missing objects,
 * orphans, conflicts and the broker events it sends. Reconciles are driven by hand.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { type Evaluation, type Evaluator, Kinds, type Query } from '../../api/index.ts';
import type { HttpClient } from '../../engine/http.ts';
import { createTracing } from '../../engine/tracing.ts';
import { FakeClient } from '../../kube/client/index.ts';
import type { Request } from '../../kube/controller.ts';
import { KubeError } from '../../kube/errors.ts';
import { createLogger } from '../../log/index.ts';
import { RUNNING_STATUS_DELAY_MS } from '../runs/index.ts';
import { EvaluationReconciler, type EvaluationReconcilerOptions } from './reconciler.ts';
import { EvaluationTelemetry } from './telemetry.ts';

const REQ: Request = { namespace: 'ns', name: 'e' };
const ctx = () => ({ signal: new AbortController().signal, logger: createLogger({ level: 'silent' }) });
const API = 'berth.dev/v1alpha1';

type Answer = (body: Record<string, unknown>, signal: AbortSignal) => Promise<Response>;
const ok = (score: number, passed: boolean) => async () =>
  new Response(JSON.stringify({ score, passed, reasoning: 'because' }));
const hang: Answer = (_b, signal) =>
  new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));

function evaluation(spec: Partial<Evaluation['spec']> = {}, status?: Evaluation['status']): Evaluation {
  return {
    apiVersion: API,
    kind: 'Evaluation',
    metadata: { ...REQ },
    spec: {
      type: 'direct',
      evaluator: { name: 'judge' },
      config: { input: 'Capital of France?', output: 'Paris' },
      timeout: '5m',
      cancel: false,
      ...spec,
    },
    ...(status ? { status } : {}),
  };
}

const evaluator = (parameters?: Record<string, string>): Evaluator => ({
  apiVersion: API,
  kind: 'Evaluator',
  metadata: { name: 'judge', namespace: 'ns' },
  spec: { address: { value: 'http://ev:9000/base' }, ...(parameters ? { parameters } : {}) },
});

function query(status?: Query['status']): Query {
  return {
    apiVersion: API,
    kind: 'Query',
    metadata: { name: 'q', namespace: 'ns' },
    spec: {
      input: 'Capital of France?',
      target: { type: 'model', name: 'm' },
      ttl: '720h',
      timeout: '5m',
      cancel: false,
    },
    ...(status ? { status } : {}),
  };
}

function setup(answers: Answer[], opts: EvaluationReconcilerOptions = {}) {
  const client = new FakeClient();
  const calls: Array<{ url: string; body: Record<string, unknown>; signal: AbortSignal }> = [];
  const fetch = async (url: string | URL, init?: RequestInit) => {
    const body = JSON.parse(String(init?.body)) as Record<string, unknown>;
    calls.push({ url: String(url), body, signal: init?.signal as AbortSignal });
    const answer = answers.shift();
    if (!answer) throw new Error('no scripted answer');
    return answer(body, init?.signal as AbortSignal);
  };
  const events: Array<{ reason: string; data: Record<string, string> }> = [];
  const http = {
    postJson: async (_url: string, body: string) => {
      events.push(...[JSON.parse(body)].flat());
      return 201;
    },
  } as unknown as HttpClient;
  const logger = createLogger({ level: 'silent' });
  const tracing = createTracing(undefined, 'test'); // spans go nowhere; events are captured above
  const telemetry = new EvaluationTelemetry({ brokerUrl: 'http://broker', http, logger, tracing });
  const r = new EvaluationReconciler(
    { client, fetch, telemetry },
    { retryInitialMs: 1, retryMaxMs: 2, ...opts },
  );
  let wake: () => void = () => {};
  r.runEnded(() => wake());
  const runEnded = () => new Promise<void>((resolve) => (wake = resolve));
  /** Reconciles, waits for the evaluator call to end, reconciles again (which writes the outcome). */
  const callToEnd = async () => {
    const ending = runEnded();
    await r.reconcile(REQ, ctx());
    await ending;
    await r.reconcile(REQ, ctx());
  };
  const get = () => client.get(Kinds.Evaluation, REQ);
  const writes = () => client.actions.map((a) => `${a.verb}:${a.subresource ?? ''}`);
  return { client, r, calls, events, telemetry, runEnded, callToEnd, get, writes };
}

describe('EvaluationReconciler: direct evaluations', () => {
  it('calls {address}/evaluate and writes done with score, verdict, times and condition in one write', async () => {
    const t = setup([ok(0.9, true)]);
    t.client.seed(Kinds.Evaluator, evaluator({ mode: 'contains', expected: 'Paris' }));
    t.client.seed(
      Kinds.Evaluation,
      evaluation({ evaluator: { name: 'judge', parameters: { expected: 'paris' } } }),
    );
    const ending = t.runEnded();
    expect(await t.r.reconcile(REQ, ctx())).toBeUndefined();
    await ending;
    await t.r.reconcile(REQ, ctx());
    expect(t.calls[0]?.url).toBe('http://ev:9000/base/evaluate');
    expect(t.calls[0]?.body).toEqual({
      type: 'direct',
      input: 'Capital of France?',
      output: 'Paris',
      parameters: { mode: 'contains', expected: 'paris' },
    });
    const s = (await t.get()).status;
    expect(s).toMatchObject({ phase: 'done', score: 0.9, passed: true, reasoning: 'because' });
    expect(s?.message).toBeUndefined();
    expect(s?.conditions?.[0]).toMatchObject({ type: 'Completed', status: 'True', reason: 'Succeeded' });
    expect(Date.parse(s?.completionTime ?? '')).toBeGreaterThanOrEqual(Date.parse(s?.startTime ?? ''));
    expect(t.writes()).toEqual(['patch:status']);
    await t.telemetry.flush();
    expect(t.events.map((e) => e.reason)).toEqual(['EvaluationStart', 'EvaluationComplete']);
    expect(t.events[1]?.data).toMatchObject({
      queryId: 'e',
      evaluationName: 'e',
      score: '0.9',
      passed: 'true',
    });
    // Terminal: nothing more to do.
    expect(await t.r.reconcile(REQ, ctx())).toBeUndefined();
    expect(t.calls).toHaveLength(1);
  });

  it(`a call outlasting ${RUNNING_STATUS_DELAY_MS} ms is marked running; cancel aborts it and it ends canceled`, async () => {
    const t = setup([hang]);
    t.client.seed(Kinds.Evaluator, evaluator());
    t.client.seed(Kinds.Evaluation, evaluation());
    await t.r.reconcile(REQ, ctx());
    await expect.poll(async () => (await t.get()).status?.phase).toBe('running');
    expect((await t.get()).status?.conditions?.[0]).toMatchObject({ status: 'False', reason: 'Running' });
    await t.client.patch(Kinds.Evaluation, REQ, { type: 'merge', patch: { spec: { cancel: true } } });
    const ending = t.runEnded();
    await t.r.reconcile(REQ, ctx());
    await ending;
    expect(t.calls[0]?.signal.aborted).toBe(true);
    await t.r.reconcile(REQ, ctx());
    const s = (await t.get()).status;
    expect(s).toMatchObject({ phase: 'canceled', message: 'evaluation canceled' });
    expect(s?.score).toBeUndefined();
    expect(s?.conditions?.[0]?.reason).toBe('Canceled');
    await t.telemetry.flush();
    expect(t.events.map((e) => e.reason)).toEqual(['EvaluationStart', 'EvaluationCanceled']);
  });

  it('retries a 5xx and a dropped connection, saying so in status, then ends done', async () => {
    const dropped = async () => {
      throw Object.assign(new TypeError('fetch failed'), { cause: new Error('other side closed') });
    };
    const t = setup([async () => new Response('busy', { status: 503 }), dropped, ok(0.2, false)]);
    t.client.seed(Kinds.Evaluator, evaluator());
    t.client.seed(Kinds.Evaluation, evaluation());
    await t.callToEnd();
    expect(t.calls).toHaveLength(3);
    expect((await t.get()).status).toMatchObject({ phase: 'done', score: 0.2, passed: false });
    // running (with the first retry's message), the second retry's message, done
    expect(t.writes()).toEqual(['patch:status', 'patch:status', 'patch:status']);
  });

  it('a 4xx ends in error with what the evaluator said', async () => {
    const t = setup([async () => new Response('{"error":"unknown mode"}', { status: 400 })]);
    t.client.seed(Kinds.Evaluator, evaluator());
    t.client.seed(Kinds.Evaluation, evaluation());
    await t.callToEnd();
    const s = (await t.get()).status;
    expect(s).toMatchObject({
      phase: 'error',
      message: 'evaluator call failed: HTTP 400: {"error":"unknown mode"}',
    });
    expect(s?.conditions?.[0]?.reason).toBe('Failed');
  });

  it('deleting the Evaluation aborts its call and writes nothing', async () => {
    const t = setup([hang]);
    t.client.seed(Kinds.Evaluator, evaluator());
    t.client.seed(Kinds.Evaluation, evaluation());
    await t.r.reconcile(REQ, ctx());
    await t.client.delete(Kinds.Evaluation, REQ);
    await t.r.reconcile(REQ, ctx());
    expect(t.calls[0]?.signal.aborted).toBe(true);
    expect(t.r.runs.size).toBe(0);
    expect(t.writes()).toEqual(['delete:']);
  });

  it('canceled before it started: canceled without a call', async () => {
    const t = setup([]);
    t.client.seed(Kinds.Evaluation, evaluation({ cancel: true }));
    await t.r.reconcile(REQ, ctx());
    expect((await t.get()).status).toMatchObject({
      phase: 'canceled',
      message: 'canceled before it started',
    });
    expect(t.calls).toHaveLength(0);
  });

  it('a missing Evaluator is waited for during the grace period, then the evaluation errors', async () => {
    const t = setup([], { missingGraceMs: 60_000 });
    t.client.seed(Kinds.Evaluation, evaluation());
    const r = await t.r.reconcile(REQ, ctx());
    expect(r?.requeueAfterMs).toBeGreaterThan(50_000);
    expect(t.writes()).toEqual([]);
    const late = setup([], { missingGraceMs: 0 });
    late.client.seed(Kinds.Evaluation, evaluation());
    await late.r.reconcile(REQ, ctx());
    expect((await late.get()).status).toMatchObject({ phase: 'error', message: 'Evaluator judge not found' });
  });

  it('running with no call in this process (a previous leader) is called again', async () => {
    const t = setup([ok(1, true)]);
    t.client.seed(Kinds.Evaluator, evaluator());
    t.client.seed(
      Kinds.Evaluation,
      evaluation({}, { phase: 'running', startTime: new Date(0).toISOString() }),
    );
    await t.callToEnd();
    expect((await t.get()).status?.phase).toBe('done');
  });

  it('a conflicting status write is requeued quietly', async () => {
    const t = setup([]);
    t.client.seed(Kinds.Evaluation, evaluation({ cancel: true }));
    t.client.failNext('patch', new KubeError(409, 'Conflict', 'stale'));
    expect(await t.r.reconcile(REQ, ctx())).toEqual({ requeue: true });
  });
});

describe('EvaluationReconciler: query evaluations', () => {
  const spec = { type: 'query' as const, config: { queryRef: { name: 'q' } } };

  it('waits while the Query runs (one write), then scores its input and response', async () => {
    const t = setup([ok(1, true)]);
    t.client.seed(Kinds.Evaluator, evaluator());
    t.client.seed(Kinds.Query, query({ phase: 'running' }));
    t.client.seed(Kinds.Evaluation, evaluation(spec));
    await t.r.reconcile(REQ, ctx());
    await t.r.reconcile(REQ, ctx());
    expect((await t.get()).status).toMatchObject({
      phase: 'pending',
      message: 'waiting for Query q to finish',
    });
    expect(t.writes()).toEqual(['patch:status']);
    expect(await t.r.requestsFor('Query', query() as KubernetesObject)).toEqual([REQ]);
    await t.client.status().patch(
      Kinds.Query,
      { namespace: 'ns', name: 'q' },
      {
        type: 'merge',
        patch: { status: { phase: 'done', response: { content: 'Paris' }, conversationId: 'c1' } },
      },
    );
    await t.callToEnd();
    expect(t.calls[0]?.body).toMatchObject({
      type: 'query',
      input: 'Capital of France?',
      output: 'Paris',
      query: {
        name: 'q',
        namespace: 'ns',
        target: { type: 'model', name: 'm' },
        response: 'Paris',
        conversationId: 'c1',
      },
    });
    expect((await t.get()).status).toMatchObject({ phase: 'done', score: 1, passed: true });
    expect(await t.r.requestsFor('Query', query() as KubernetesObject)).toEqual([]); // finished: no longer interested
  });

  it('errors when the Query failed or is missing', async () => {
    const failed = setup([]);
    failed.client.seed(Kinds.Query, query({ phase: 'error', message: 'model said no' }));
    failed.client.seed(Kinds.Evaluation, evaluation(spec));
    await failed.r.reconcile(REQ, ctx());
    expect((await failed.get()).status).toMatchObject({
      phase: 'error',
      message: 'Query q ended error: model said no',
    });
    const missing = setup([], { missingGraceMs: 0 });
    missing.client.seed(Kinds.Evaluation, evaluation(spec));
    await missing.r.reconcile(REQ, ctx());
    expect((await missing.get()).status).toMatchObject({ phase: 'error', message: 'Query q not found' });
  });
});
