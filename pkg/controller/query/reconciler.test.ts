/**
 * The Query reconciler against the FakeClient (the seam: no Kubernetes mocks): dispatch, cancel,
 * orphans, TTL expiry. Each test drives reconciles by hand, as the controller's workers would.
 */
import { describe, expect, it } from 'vitest';
import { Kinds, QUERY_FINALIZER, type Query } from '../../api/index.ts';
import type { QueryEngine, QueryOutcome, RunContext } from '../../engine/contract.ts';
import { type Client, FakeClient } from '../../kube/client/index.ts';
import type { Request } from '../../kube/controller.ts';
import { EventRecorder } from '../../kube/events.ts';
import { createLogger } from '../../log/index.ts';
import { RUNNING_STATUS_DELAY_MS } from '../runs/index.ts';
import { ORPHANED_MESSAGE, QueryReconciler } from './reconciler.ts';

const REQ: Request = { namespace: 'ns', name: 'q' };

async function eventually(fn: () => Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
const ctx = () => ({ signal: new AbortController().signal, logger: createLogger({ level: 'silent' }) });

/** Runs each query as told by `outcome`; records what it was given. */
class StubEngine implements QueryEngine {
  readonly calls: Array<{ phase?: string; signal: AbortSignal }> = [];
  outcome: (ctx: RunContext) => Promise<QueryOutcome> = async () => ({
    phase: 'done',
    content: 'the answer',
    tokenUsage: { promptTokens: 1, completionTokens: 2, totalTokens: 3 },
  });
  run(q: Query, ctx: RunContext): Promise<QueryOutcome> {
    this.calls.push({ phase: q.status?.phase, signal: ctx.signal });
    return this.outcome(ctx);
  }
}

const untilAborted = (ctx: RunContext) =>
  new Promise<QueryOutcome>((resolve) =>
    ctx.signal.addEventListener('abort', () => resolve({ phase: 'canceled', message: 'query canceled' })),
  );

function query(extra: { spec?: Partial<Query['spec']>; status?: Query['status']; finalizer?: boolean } = {}) {
  return {
    apiVersion: 'berth.dev/v1alpha1',
    kind: 'Query',
    metadata: { ...REQ, ...(extra.finalizer ? { finalizers: [QUERY_FINALIZER] } : {}) },
    spec: { input: 'hi', target: { type: 'model', name: 'default' }, ...extra.spec },
    ...(extra.status ? { status: extra.status } : {}),
  } as Query;
}

function setup(engine: QueryEngine | undefined = new StubEngine(), client = new FakeClient()) {
  const recorder = new EventRecorder(client, 'test', 'test');
  const r = new QueryReconciler({ client, engine, recorder });
  const ended: Request[] = [];
  let wake: () => void = () => {};
  r.runEnded((req) => {
    ended.push(req);
    wake();
  });
  const runEnded = () => new Promise<void>((resolve) => (wake = resolve));
  const get = () => client.get(Kinds.Query, REQ);
  return { client, r, ended, runEnded, get };
}

/** The client with reads frozen at `snapshot`: an informer cache that has not caught up yet. */
function staleReads(client: FakeClient, snapshot: Query): Client {
  return new Proxy(client, {
    get(target, p) {
      if (p === 'get') return async () => structuredClone(snapshot);
      const v = Reflect.get(target, p, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

describe('QueryReconciler dispatch', () => {
  it('a quick run: finalizer, the engine run, then one final status write — no running write', async () => {
    const engine = new StubEngine();
    const { client, r, ended, runEnded, get } = setup(engine);
    client.seed(Kinds.Query, query());
    const ending = runEnded();
    expect(await r.reconcile(REQ, ctx())).toBeUndefined();
    expect(engine.calls).toHaveLength(1);
    expect(engine.calls[0]?.phase).toBeUndefined(); // pending: nothing written before the run
    await ending;
    expect(ended).toEqual([REQ]);
    const next = await r.reconcile(REQ, ctx());
    expect(next?.requeueAfterMs).toBeGreaterThan(0); // the TTL check
    const done = await get();
    expect(done.metadata.finalizers).toEqual([QUERY_FINALIZER]);
    expect(done.status).toMatchObject({ phase: 'done', response: { content: 'the answer' } });
    expect(Date.parse(done.status?.startTime ?? '')).toBeLessThanOrEqual(
      Date.parse(done.status?.completionTime ?? ''),
    );
    expect(client.actions.map((a) => `${a.verb}:${a.subresource ?? ''}`)).toEqual([
      'patch:', // finalizer (a Query created through the API service has it already)
      'patch:status', // done
    ]);
  });

  it('created with the finalizer (API service): one write from pending to done', async () => {
    const { client, r, runEnded } = setup();
    client.seed(Kinds.Query, query({ finalizer: true }));
    const ending = runEnded();
    await r.reconcile(REQ, ctx());
    await ending;
    await r.reconcile(REQ, ctx());
    expect(client.actions.map((a) => `${a.verb}:${a.subresource ?? ''}`)).toEqual(['patch:status']);
  });

  it(`a run outlasting ${RUNNING_STATUS_DELAY_MS} ms is marked running (with its conversation id), then done`, async () => {
    const engine = new StubEngine();
    let finish: (o: QueryOutcome) => void = () => {};
    engine.outcome = async (c) => {
      c.onConversation?.('conv-1');
      return new Promise((resolve) => (finish = resolve));
    };
    const { client, r, runEnded, get } = setup(engine);
    client.seed(Kinds.Query, query({ finalizer: true }));
    await r.reconcile(REQ, ctx());
    await eventually(async () => (await get()).status?.phase === 'running');
    expect((await get()).status).toMatchObject({ phase: 'running', conversationId: 'conv-1' });
    const ending = runEnded();
    finish({
      phase: 'done',
      content: 'late',
      tokenUsage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 },
    });
    await ending;
    await r.reconcile(REQ, ctx());
    expect((await get()).status).toMatchObject({ phase: 'done', conversationId: 'conv-1' });
    expect(client.actions.map((a) => `${a.verb}:${a.subresource ?? ''}`)).toEqual([
      'patch:status', // running + conversation id, once
      'patch:status', // done
    ]);
  });

  it('a stale read after the final write never dispatches the query twice', async () => {
    const engine = new StubEngine();
    const fake = new FakeClient();
    fake.seed(Kinds.Query, query({ finalizer: true }));
    const pending = await fake.get(Kinds.Query, REQ);
    let frozen = false;
    const reads = new Proxy(fake, {
      get(target, p) {
        if (p === 'get' && frozen) return async () => structuredClone(pending);
        const v = Reflect.get(target, p, target);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const { r, runEnded } = setup(engine, reads);
    const ending = runEnded();
    await r.reconcile(REQ, ctx());
    await ending;
    await r.reconcile(REQ, ctx()); // final status written
    frozen = true; // the informer has not caught up: it still shows the query pending
    expect(await r.reconcile(REQ, ctx())).toBeUndefined();
    expect(engine.calls).toHaveLength(1);
    expect((await fake.get(Kinds.Query, REQ)).status?.phase).toBe('done');
  });

  it('without an engine a pending query only gets its finalizer', async () => {
    const client = new FakeClient();
    const r = new QueryReconciler({ client, recorder: new EventRecorder(client, 't', 't') });
    client.seed(Kinds.Query, query());
    await r.reconcile(REQ, ctx());
    const q = await client.get(Kinds.Query, REQ);
    expect(q.metadata.finalizers).toEqual([QUERY_FINALIZER]);
    expect(q.status).toBeUndefined();
  });
});

describe('QueryReconciler cancel', () => {
  it('spec.cancel on a pending query → canceled without a run', async () => {
    const engine = new StubEngine();
    const { client, r, get } = setup(engine);
    client.seed(Kinds.Query, query({ spec: { cancel: true } }));
    await r.reconcile(REQ, ctx());
    expect((await get()).status).toMatchObject({ phase: 'canceled', message: 'canceled before it started' });
    expect(engine.calls).toHaveLength(0);
  });

  it('spec.cancel on a running query aborts its run; the outcome is written canceled', async () => {
    const engine = new StubEngine();
    engine.outcome = untilAborted;
    const { client, r, runEnded, get } = setup(engine);
    client.seed(Kinds.Query, query());
    await r.reconcile(REQ, ctx());
    await client.patch(Kinds.Query, REQ, { type: 'merge', patch: { spec: { cancel: true } } });
    const ending = runEnded();
    await r.reconcile(REQ, ctx());
    expect(engine.calls[0]?.signal.aborted).toBe(true);
    await ending;
    await r.reconcile(REQ, ctx());
    expect((await get()).status).toMatchObject({ phase: 'canceled', message: 'query canceled' });
    expect((await get()).status?.conditions?.[0]?.reason).toBe('Canceled');
  });

  it('stopping (lost lease, shutdown) aborts runs and writes no outcome', async () => {
    const engine = new StubEngine();
    engine.outcome = untilAborted;
    const { client, r, ended } = setup(engine);
    client.seed(Kinds.Query, query());
    await r.reconcile(REQ, ctx());
    r.stop();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(engine.calls[0]?.signal.aborted).toBe(true);
    expect(ended).toEqual([]);
    expect(r.runs.size).toBe(0);
  });
});

describe('QueryReconciler drain (a graceful stop)', () => {
  it('lets a run in flight finish and write its outcome, and starts no new run meanwhile', async () => {
    const engine = new StubEngine();
    let finish: () => void = () => {};
    engine.outcome = () =>
      new Promise((resolve) => {
        finish = () =>
          resolve({
            phase: 'done',
            content: 'late',
            tokenUsage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 },
          });
      });
    const { client, r, runEnded, get } = setup(engine);
    client.seed(Kinds.Query, query());
    await r.reconcile(REQ, ctx());
    const draining = r.drain();
    // A pending query seen while draining is left for the next leader.
    const other = { namespace: REQ.namespace, name: 'other' };
    client.seed(Kinds.Query, {
      ...query(),
      metadata: { ...query().metadata, name: 'other', uid: 'u-other' },
    });
    expect(await r.reconcile(other, ctx())).toEqual({ requeueAfterMs: 1000 });
    expect(engine.calls).toHaveLength(1);
    const ending = runEnded();
    finish();
    await ending;
    await r.reconcile(REQ, ctx()); // the controller writes the outcome while the lease is held
    await draining;
    expect((await get()).status).toMatchObject({ phase: 'done' });
    expect(engine.calls[0]?.signal.aborted).toBe(false);
    expect(r.runs.size).toBe(0);
  });

  it('aborts what is still running when the drain time is over', async () => {
    const engine = new StubEngine();
    engine.outcome = untilAborted;
    const client = new FakeClient();
    const r = new QueryReconciler(
      { client, engine, recorder: new EventRecorder(client, 'test', 'test') },
      { drainMs: 50 },
    );
    client.seed(Kinds.Query, query());
    await r.reconcile(REQ, ctx());
    await r.drain();
    expect(r.runs.size).toBe(1);
    r.stop();
    expect(engine.calls[0]?.signal.aborted).toBe(true);
  });
});

describe('QueryReconciler orphans', () => {
  it('a running query with no run in this process ends in error with the orphan message', async () => {
    const engine = new StubEngine();
    const { client, r, get } = setup(engine);
    client.seed(
      Kinds.Query,
      query({ finalizer: true, status: { phase: 'running', startTime: new Date().toISOString() } }),
    );
    await r.reconcile(REQ, ctx());
    expect((await get()).status).toMatchObject({ phase: 'error', message: ORPHANED_MESSAGE });
    expect(engine.calls).toHaveLength(0);
  });

  it('a query deleted without its finalizer stops its run', async () => {
    const engine = new StubEngine();
    engine.outcome = untilAborted;
    const { client, r } = setup(engine);
    client.seed(Kinds.Query, query());
    await r.reconcile(REQ, ctx());
    const q = await client.get(Kinds.Query, REQ);
    await client.patch(Kinds.Query, REQ, {
      type: 'merge',
      patch: { metadata: { finalizers: null, resourceVersion: q.metadata.resourceVersion } },
    });
    await client.delete(Kinds.Query, REQ);
    await r.reconcile(REQ, ctx());
    expect(engine.calls[0]?.signal.aborted).toBe(true);
    expect(r.runs.size).toBe(0);
  });
});

describe('QueryReconciler TTL', () => {
  const finished = (completionTime: string, ttl = '1h') =>
    query({ finalizer: true, spec: { ttl }, status: { phase: 'done', completionTime } });

  it('requeues a finished query until spec.ttl after completion', async () => {
    const { client, r } = setup();
    client.seed(Kinds.Query, finished(new Date(Date.now() - 60_000).toISOString()));
    const next = await r.reconcile(REQ, ctx());
    expect(next?.requeueAfterMs).toBeGreaterThan(3_500_000);
    expect(next?.requeueAfterMs).toBeLessThanOrEqual(3_540_000);
    expect(client.actions).toEqual([]);
  });

  it('deletes an expired query, conditional on its uid', async () => {
    const { client, r, get } = setup();
    client.seed(Kinds.Query, finished(new Date(Date.now() - 2 * 3_600_000).toISOString()));
    await r.reconcile(REQ, ctx());
    expect(client.actions.map((a) => a.verb)).toEqual(['delete']);
    expect((await get()).metadata.deletionTimestamp).toBeTruthy(); // the finalizer holds it for the purge
  });

  it('never deletes a new query that took an expired one’s name (uid precondition → 409)', async () => {
    const fake = new FakeClient();
    fake.seed(Kinds.Query, finished(new Date(Date.now() - 2 * 3_600_000).toISOString()));
    const expired = await fake.get(Kinds.Query, REQ);
    await fake.delete(Kinds.Query, REQ);
    const q = await fake.get(Kinds.Query, REQ);
    await fake.patch(Kinds.Query, REQ, {
      type: 'merge',
      patch: { metadata: { finalizers: null, resourceVersion: q.metadata.resourceVersion } },
    });
    fake.seed(Kinds.Query, query({ finalizer: true })); // same name, new uid
    const { r } = setup(new StubEngine(), staleReads(fake, expired) as FakeClient);
    expect(await r.reconcile(REQ, ctx())).toEqual({ requeue: true });
    const survivor = await fake.get(Kinds.Query, REQ);
    expect(survivor.metadata.uid).not.toBe(expired.metadata.uid);
    expect(survivor.metadata.deletionTimestamp).toBeUndefined();
  });
});
