/**
 * The Query reconciler's dispatch to the engine seam, with a stub QueryEngine (our own seam; the
 * real engine is tested by its owner): phases, status fields, cancel, deletion, orphans, TTL.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kinds, type Query } from '../../pkg/api/index.ts';
import { ORPHANED_MESSAGE, type RunningController, startController } from '../../pkg/controller/index.ts';
import type { QueryEngine, QueryOutcome, RunContext } from '../../pkg/engine/contract.ts';
import { createLogger } from '../../pkg/log/index.ts';
import { createNamespace, kubeConfig } from '../support/kube.ts';
import { create, liveClient, queryObject } from './support.ts';

type Behaviour = (q: Query, ctx: RunContext) => Promise<QueryOutcome>;

/** Runs each query with the behaviour registered under its name; records what it was given. */
class StubEngine implements QueryEngine {
  readonly behaviours = new Map<string, Behaviour>();
  readonly calls: Array<{ name: string; phase?: string; signal: AbortSignal }> = [];
  run(q: Query, ctx: RunContext): Promise<QueryOutcome> {
    this.calls.push({ name: q.metadata.name, phase: q.status?.phase, signal: ctx.signal });
    const b = this.behaviours.get(q.metadata.name);
    return b ? b(q, ctx) : Promise.resolve({ phase: 'error', message: 'no behaviour' });
  }
}

const untilAborted = (ctx: RunContext) =>
  new Promise<QueryOutcome>((resolve) =>
    ctx.signal.addEventListener('abort', () => resolve({ phase: 'canceled', message: 'query canceled' })),
  );

let ns: string;
let ctl: RunningController;
let orphanCreatedBeforeStart: string;
const engine = new StubEngine();
const admin = kubeConfig();
const adminClient = liveClient(admin);

const waitQuery = (name: string, pred: (q: Query | undefined) => boolean, timeoutMs = 15_000) =>
  ctl.caches.waitFor(Kinds.Query, ns, name, (o) => pred(o as Query | undefined), { timeoutMs }) as Promise<
    Query | undefined
  >;
const phaseIs = (phase: string) => (q: Query | undefined) => q?.status?.phase === phase;

beforeAll(async () => {
  ns = await createNamespace('ctl-dispatch');
  // A query some previous controller left `running`: this process has no run for it.
  orphanCreatedBeforeStart = 'orphan';
  await create(admin, 'queries', queryObject(ns, orphanCreatedBeforeStart));
  await adminClient
    .status()
    .patch(
      Kinds.Query,
      { namespace: ns, name: orphanCreatedBeforeStart },
      { type: 'merge', patch: { status: { phase: 'running', startTime: new Date().toISOString() } } },
    );
  ctl = await startController({
    kc: kubeConfig('controller'),
    namespace: ns,
    engine,
    leaderElection: false,
    probes: false,
    metrics: false,
    logger: createLogger({ level: 'silent' }),
  });
});

afterAll(async () => {
  await ctl?.stop();
});

describe('Query dispatch to the engine', () => {
  it('pending → running (a run outlasting the delay) → done with response, usage, conversation, times and conditions', async () => {
    let seenRunning: Query | undefined;
    engine.behaviours.set('ok', async (_q, ctx) => {
      ctx.onConversation?.('conv-42');
      // Written once the run outlasts the delay: running, with the conversation id.
      seenRunning = await waitQuery('ok', (x) => x?.status?.conversationId === 'conv-42');
      return {
        phase: 'done',
        content: 'the answer',
        tokenUsage: { promptTokens: 3, completionTokens: 4, totalTokens: 7 },
        conversationId: 'conv-42',
      };
    });
    await create(admin, 'queries', queryObject(ns, 'ok'));
    const q = await waitQuery('ok', phaseIs('done'));
    expect(seenRunning?.status?.phase).toBe('running');
    expect(seenRunning?.status?.startTime).toBeTruthy();
    expect(q?.status?.startTime).toBe(seenRunning?.status?.startTime);
    const s = q?.status;
    expect(s?.response).toEqual({ target: { type: 'model', name: 'default' }, content: 'the answer' });
    expect(s?.tokenUsage).toEqual({ promptTokens: 3, completionTokens: 4, totalTokens: 7 });
    expect(s?.conversationId).toBe('conv-42');
    expect(s?.a2a?.contextId).toBe('conv-42');
    expect(Date.parse(s?.completionTime ?? '')).toBeGreaterThanOrEqual(Date.parse(s?.startTime ?? ''));
    expect(s?.duration).toMatch(/^\d+(\.\d+)?(ms|s)$/);
    expect(s?.conditions?.[0]).toMatchObject({ type: 'Completed', status: 'True', reason: 'Succeeded' });
    expect(s?.message).toBeUndefined();
    expect(engine.calls.filter((c) => c.name === 'ok')).toHaveLength(1);
  });

  it('an error outcome sets phase error with its message', async () => {
    engine.behaviours.set('bad', async () => ({ phase: 'error', message: 'model said no' }));
    await create(admin, 'queries', queryObject(ns, 'bad'));
    const q = await waitQuery('bad', phaseIs('error'));
    expect(q?.status?.message).toBe('model said no');
    expect(q?.status?.conditions?.[0]).toMatchObject({
      status: 'True',
      reason: 'Failed',
      message: 'model said no',
    });
  });

  it('spec.cancel aborts the run and the query ends canceled', async () => {
    engine.behaviours.set('cancel-me', async (_q, ctx) => untilAborted(ctx));
    await create(admin, 'queries', queryObject(ns, 'cancel-me'));
    await waitQuery('cancel-me', phaseIs('running'));
    await adminClient.patch(
      Kinds.Query,
      { namespace: ns, name: 'cancel-me' },
      { type: 'merge', patch: { spec: { cancel: true } } },
    );
    const q = await waitQuery('cancel-me', phaseIs('canceled'));
    expect(q?.status?.conditions?.[0]?.reason).toBe('Canceled');
    expect(engine.calls.find((c) => c.name === 'cancel-me')?.signal.aborted).toBe(true);
  });

  it('deleting a running query aborts the run, then the finalizer is released', async () => {
    engine.behaviours.set('delete-me', async (_q, ctx) => untilAborted(ctx));
    await create(admin, 'queries', queryObject(ns, 'delete-me'));
    await waitQuery('delete-me', phaseIs('running'));
    const { rawRequest } = await import('../../pkg/kube/raw.ts');
    await rawRequest(admin, {
      method: 'DELETE',
      path: `/apis/berth.dev/v1alpha1/namespaces/${ns}/queries/delete-me`,
    });
    await waitQuery('delete-me', (q) => q === undefined);
    expect(engine.calls.find((c) => c.name === 'delete-me')?.signal.aborted).toBe(true);
  });

  it('a query found running with no run in this process is failed, not left running', async () => {
    const q = await waitQuery(orphanCreatedBeforeStart, phaseIs('error'));
    expect(q?.status?.message).toBe(ORPHANED_MESSAGE);
    expect(engine.calls.find((c) => c.name === orphanCreatedBeforeStart)).toBeUndefined();
  });

  it('a finished query is deleted spec.ttl after completion', async () => {
    engine.behaviours.set('short-lived', async () => ({
      phase: 'done',
      content: 'x',
      tokenUsage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
    }));
    await create(admin, 'queries', queryObject(ns, 'short-lived', { ttl: '2s' }));
    const done = await waitQuery('short-lived', phaseIs('done'));
    const completed = Date.parse(done?.status?.completionTime ?? '');
    await waitQuery('short-lived', (q) => q === undefined, 20_000);
    expect(Date.now() - completed).toBeGreaterThanOrEqual(1900);
  });
});

describe('without an engine', () => {
  it('leaves pending queries pending (finalizer only)', async () => {
    const ns2 = await createNamespace('ctl-noengine');
    const noEngine = await startController({
      kc: kubeConfig('controller'),
      namespace: ns2,
      leaderElection: false,
      probes: false,
      metrics: false,
      logger: createLogger({ level: 'silent' }),
    });
    try {
      await create(admin, 'queries', queryObject(ns2, 'waits'));
      const q = (await noEngine.caches.waitFor(
        Kinds.Query,
        ns2,
        'waits',
        (o) => !!o?.metadata?.finalizers?.length,
        {
          timeoutMs: 15_000,
        },
      )) as KubernetesObject & { status?: { phase?: string } };
      // Reconciled (the finalizer is there) and still not dispatched.
      expect(q.status?.phase).toBeUndefined();
    } finally {
      await noEngine.stop();
    }
  });
});
