/**
 * A pending Query whose Memory (or MCPServer) is not resolved yet, against the FakeClient: it waits
 * pending with the reason on its Completed=False condition, is requeued with backoff, runs once the
 * engine says nothing is missing (with the wait counted against spec.timeout), and ends Timeout
 * without a run when spec.timeout passes first.
 */
import { describe, expect, it } from 'vitest';
import { Kinds, QUERY_FINALIZER, type Query } from '../../api/index.ts';
import type { QueryEngine, QueryOutcome, RunContext } from '../../engine/contract.ts';
import type { Unresolved } from '../../engine/readiness.ts';
import type { InformerCache } from '../../kube/cache.ts';
import { FakeClient } from '../../kube/client/index.ts';
import type { Request } from '../../kube/controller.ts';
import { EventRecorder } from '../../kube/events.ts';
import { createLogger } from '../../log/index.ts';
import { dependencyStep, waitingQueries } from './dependencies.ts';
import { QueryReconciler } from './reconciler.ts';

const REQ: Request = { namespace: 'ns', name: 'q' };
const ctx = () => ({ signal: new AbortController().signal, logger: createLogger({ level: 'silent' }) });
const MEMORY: Unresolved = {
  reason: 'MemoryNotReady',
  kind: 'Memory',
  name: 'default',
  message: 'waiting for Memory default to be resolved',
};

/** An engine whose `waitsFor` says what `blocker` holds; records each run's context. */
class WaitingEngine implements QueryEngine {
  blocker: Unresolved | undefined = MEMORY;
  readonly runs: RunContext[] = [];
  waitsFor = () => this.blocker;
  async run(_q: Query, c: RunContext): Promise<QueryOutcome> {
    this.runs.push(c);
    return {
      phase: 'done',
      content: 'ok',
      tokenUsage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
    };
  }
}

function query(spec: Partial<Query['spec']> = {}, status?: Query['status']): Query {
  return {
    apiVersion: 'berth.dev/v1alpha1',
    kind: 'Query',
    metadata: { ...REQ, finalizers: [QUERY_FINALIZER], generation: 1 },
    spec: { input: 'hi', target: { type: 'model', name: 'm' }, ...spec },
    ...(status ? { status } : {}),
  } as Query;
}

function setup(q: Query) {
  const client = new FakeClient();
  const engine = new WaitingEngine();
  const r = new QueryReconciler({ client, engine, recorder: new EventRecorder(client, 't', 't') });
  client.seed(Kinds.Query, q);
  const writes = () => client.actions.filter((a) => a.subresource === 'status').length;
  return { client, engine, r, writes, get: () => client.get(Kinds.Query, REQ) };
}

const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

describe('a Query waiting for its Memory', () => {
  it('stays pending with Completed=False MemoryNotReady, written once, requeued with backoff', async () => {
    const { engine, r, writes, get } = setup(query());
    const first = await r.reconcile(REQ, ctx());
    expect(engine.runs).toHaveLength(0);
    expect(first?.requeueAfterMs).toBeGreaterThanOrEqual(200);
    const q = await get();
    expect(q.status?.phase).toBe('pending');
    expect(q.status?.conditions).toEqual([
      expect.objectContaining({
        type: 'Completed',
        status: 'False',
        reason: 'MemoryNotReady',
        message: MEMORY.message,
      }),
    ]);
    // Nothing changed: looked at again without another write.
    await r.reconcile(REQ, ctx());
    expect(writes()).toBe(1);
    expect(engine.runs).toHaveLength(0);
  });

  it('runs once resolved; the time it waited is spent of spec.timeout', async () => {
    const since = ago(2000);
    const waiting = {
      phase: 'pending' as const,
      conditions: [
        { type: 'Completed', status: 'False' as const, reason: 'MemoryNotReady', lastTransitionTime: since },
      ],
    };
    const { engine, r, get } = setup(query({}, waiting));
    engine.blocker = undefined;
    const ended = new Promise<void>((resolve) => r.runEnded(() => resolve()));
    expect(await r.reconcile(REQ, ctx())).toBeUndefined();
    expect(engine.runs).toHaveLength(1);
    expect(engine.runs[0]?.spentMs).toBeGreaterThanOrEqual(2000);
    await ended;
    await r.reconcile(REQ, ctx());
    const q = await get();
    expect(q.status?.phase).toBe('done');
    expect(q.status?.conditions?.map((c) => `${c.type}=${c.status}:${c.reason}`)).toEqual([
      'Completed=True:Succeeded',
    ]);
  });

  it('a query that never waited gets no spentMs', async () => {
    const { engine, r } = setup(query());
    engine.blocker = undefined;
    await r.reconcile(REQ, ctx());
    expect(engine.runs[0]?.spentMs).toBeUndefined();
  });

  it('ends error/Timeout without a run once spec.timeout passed while it waited', async () => {
    const waiting = {
      phase: 'pending' as const,
      conditions: [
        {
          type: 'Completed',
          status: 'False' as const,
          reason: 'MemoryNotReady',
          lastTransitionTime: ago(1500),
        },
      ],
    };
    const { engine, r, get } = setup(query({ timeout: '1s' }, waiting));
    await r.reconcile(REQ, ctx());
    expect(engine.runs).toHaveLength(0);
    const q = await get();
    expect(q.status?.phase).toBe('error');
    expect(q.status?.message).toBe(
      'query timed out after 1s (spec.timeout) waiting for Memory default to be resolved',
    );
    expect(q.status?.conditions?.[0]).toMatchObject({ type: 'Completed', status: 'True', reason: 'Timeout' });
  });

  it('another blocker keeps the time the wait began; the requeue is never later than the deadline', () => {
    const since = ago(10_000);
    const q = query(
      { timeout: '11s' },
      {
        phase: 'pending',
        conditions: [
          { type: 'Completed', status: 'False', reason: 'MemoryNotReady', lastTransitionTime: since },
        ],
      },
    );
    const mcp: Unresolved = {
      reason: 'MCPServerNotReady',
      kind: 'MCPServer',
      name: 's',
      message: 'waiting for s',
    };
    const step = dependencyStep(q, mcp, new Date());
    expect(step.kind).toBe('wait');
    if (step.kind !== 'wait') return;
    expect(step.requeueAfterMs).toBeLessThanOrEqual(1010);
    expect(step.status?.conditions).toEqual([
      expect.objectContaining({ reason: 'MCPServerNotReady', lastTransitionTime: since }),
    ]);
  });

  it('a Memory not in the cache yet (a young Query) is looked for again soon, nothing written', async () => {
    const { engine, r, writes } = setup(query());
    engine.blocker = {
      ...MEMORY,
      message: 'waiting for Memory default: not found',
      until: Date.now() + 3000,
    };
    const next = await r.reconcile(REQ, ctx());
    expect(next?.requeueAfterMs).toBeGreaterThan(0);
    expect(next?.requeueAfterMs).toBeLessThanOrEqual(1000);
    expect(writes()).toBe(0);
    expect(engine.runs).toHaveLength(0);
  });

  it('a spec.timeout that is not a duration is not waited on: the run fails it', () => {
    expect(dependencyStep(query({ timeout: 'soon' }), MEMORY, new Date())).toEqual({ kind: 'run' });
  });
});

describe('waitingQueries', () => {
  const waitingOn = (name: string, reason: string, memory?: string) =>
    ({
      ...query(memory ? { memory: { name: memory } } : {}, {
        phase: 'pending',
        conditions: [{ type: 'Completed', status: 'False', reason, lastTransitionTime: ago(0) }],
      }),
      metadata: { name, namespace: 'ns' },
    }) as Query;
  const queries = [
    waitingOn('a', 'MemoryNotReady'),
    waitingOn('b', 'MemoryNotReady', 'other'),
    waitingOn('c', 'MCPServerNotReady'),
    { ...query(), metadata: { name: 'd', namespace: 'ns' } } as Query, // pending, no condition
    { ...query({}, { phase: 'done' }), metadata: { name: 'e', namespace: 'ns' } } as Query, // finished
  ];
  const cache = {
    list: (_ref: unknown, ns: string) => (ns === 'ns' ? queries : []),
  } as unknown as InformerCache;

  it('a Memory change enqueues the pending Queries using that Memory; an MCPServer change those waiting for one', () => {
    const names = (kind: 'Memory' | 'MCPServer', name: string) =>
      waitingQueries(cache, kind, { metadata: { namespace: 'ns', name } }).map((r) => r.name);
    // Every pending Query on Memory default, whatever it waits for (a Memory not found yet writes
    // no condition: d); not the one on another Memory (b), not a finished one (e).
    expect(names('Memory', 'default')).toEqual(['a', 'c', 'd']);
    expect(names('Memory', 'other')).toEqual(['b']);
    expect(names('MCPServer', 'any')).toEqual(['c']);
    expect(
      waitingQueries(cache, 'Memory', { metadata: { namespace: 'elsewhere', name: 'default' } }),
    ).toEqual([]);
  });
});
