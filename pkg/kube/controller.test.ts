import type { KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../log/index.ts';
import type { InformerCache } from './cache.ts';
import {
  Controller,
  type ReconcileContext,
  type Reconciler,
  type Request,
  TerminalError,
} from './controller.ts';
import type { InformerHandlers } from './informer.ts';
import { CoreKinds } from './kinds.ts';
import { ItemExponentialRateLimiter } from './rate-limiter.ts';

const noLimit = () => new ItemExponentialRateLimiter(1, 10);
const req = (name: string, namespace = 'ns'): Request => ({ namespace, name });
const reconciler = (fn: (r: Request, ctx: ReconcileContext) => Promise<unknown>): Reconciler => ({
  reconcile: async (r, ctx) => (await fn(r, ctx)) ?? undefined,
});
const tick = (ms = 20) => new Promise((r) => setTimeout(r, ms));

const settle = (c: Controller) =>
  new Promise<void>((resolve) => {
    const t = setInterval(() => {
      if (c.queue.depth === 0 && c.queue.processingCount === 0 && c.queue.delayedCount === 0) {
        clearInterval(t);
        resolve();
      }
    }, 2);
  });

/** Just enough of an InformerCache for watches: change handlers, listAll and get. */
function fakeCache(objects: KubernetesObject[]) {
  const handlers = new Set<InformerHandlers<KubernetesObject>>();
  const cache = {
    onChange: (_ref: unknown, h: InformerHandlers<KubernetesObject>) => {
      handlers.add(h);
      return () => handlers.delete(h);
    },
    listAll: () => objects,
    get: (_ref: unknown, namespace: string, name: string) =>
      objects.find((o) => o.metadata?.namespace === namespace && o.metadata?.name === name),
  } as unknown as InformerCache;
  const emit = (o: KubernetesObject) => {
    for (const h of handlers) h.onAdd?.(o);
  };
  const remove = (o: KubernetesObject) => {
    objects.splice(objects.indexOf(o), 1);
    for (const h of handlers) h.onDelete?.(o);
  };
  return { cache, emit, remove, subscribers: () => handlers.size };
}

describe('Controller', () => {
  it('never reconciles one request twice at once, and reconciles one changed mid-run once more', async () => {
    let active = 0;
    let maxActive = 0;
    const runs: string[] = [];
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const c = new Controller({
      name: 't',
      workers: 4,
      rateLimiter: noLimit(),
      reconciler: reconciler(async (r) => {
        active++;
        maxActive = Math.max(maxActive, active);
        runs.push(`${r.namespace}/${r.name}`);
        if (runs.length === 1) await gate;
        active--;
      }),
    });
    c.start();
    c.enqueue(req('a'));
    await tick();
    c.enqueue(req('a'));
    c.enqueue(req('a'));
    release();
    await tick();
    await settle(c);
    expect(runs).toEqual(['ns/a', 'ns/a']);
    expect(maxActive).toBe(1);
    await c.stop();
  });

  it('requeues errors with backoff, not terminal errors; counts programming errors as panics', async () => {
    const calls = new Map<string, number>();
    const c = new Controller({
      name: 't',
      rateLimiter: new ItemExponentialRateLimiter(1, 4),
      reconciler: reconciler(async ({ name }) => {
        const n = (calls.get(name) ?? 0) + 1;
        calls.set(name, n);
        if (name === 'flaky' && n < 3) throw new Error('transient');
        if (name === 'terminal') throw new TerminalError('bad spec');
        if (name === 'panic' && n < 2) (undefined as unknown as { x: () => void }).x();
      }),
    });
    c.start();
    for (const k of ['flaky', 'terminal', 'panic']) c.enqueue(req(k));
    await settle(c);
    expect(calls.get('flaky')).toBe(3);
    expect(calls.get('terminal')).toBe(1);
    expect(calls.get('panic')).toBe(2);
    expect(c.panics).toBe(1);
    expect(c.errors).toBe(4);
    expect(c.queue.numRequeues('ns/flaky')).toBe(0); // forgotten after success
    await c.stop();
  });

  it('honours requeueAfter', async () => {
    const at: number[] = [];
    const c = new Controller({
      name: 't',
      reconciler: reconciler(async () => {
        at.push(Date.now());
        return at.length === 1 ? { requeueAfterMs: 60 } : undefined;
      }),
    });
    c.start();
    c.enqueue(req('k'));
    await tick();
    await settle(c);
    expect(at).toHaveLength(2);
    expect((at[1] as number) - (at[0] as number)).toBeGreaterThanOrEqual(55);
    await c.stop();
  });

  it('stop aborts running reconciles at once and a restart gets a fresh queue', async () => {
    let aborted = false;
    const c = new Controller({
      name: 't',
      reconciler: reconciler(
        (_r, { signal }) =>
          new Promise((resolve) => {
            signal.addEventListener('abort', () => {
              aborted = true;
              resolve(undefined);
            });
          }),
      ),
    });
    c.start();
    c.enqueue(req('k'));
    await tick(10);
    await c.stop();
    expect(aborted).toBe(true);
    c.enqueue(req('dropped-while-stopped'));
    c.start();
    expect(c.queue.depth).toBe(0);
    await c.stop();
  });

  it('hands the reconciler a typed request (cluster-scoped too) and a logger with a reconcile id', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger({
      level: 'info',
      destination: { write: (s: string) => lines.push(JSON.parse(s)) },
    });
    const seen: Request[] = [];
    const c = new Controller({
      name: 'typed',
      logger,
      reconciler: reconciler(async (r, ctx) => {
        seen.push(r);
        ctx.logger.info('reconciling');
      }),
    });
    c.enqueue(req('q1', 'team-a'));
    c.enqueue(req('node-1', ''));
    c.enqueue(req('q1', 'team-a')); // the same request: queued once
    c.start();
    await tick();
    await settle(c);
    await c.stop();
    expect(seen).toEqual([req('q1', 'team-a'), req('node-1', '')]);
    expect(lines.map((l) => [l.controller, l.request])).toEqual([
      ['typed', 'team-a/q1'],
      ['typed', '/node-1'],
    ]);
    const ids = lines.map((l) => l.reconcileId as string);
    expect(ids[0]).toMatch(/^[0-9a-f]{8}$/);
    expect(ids[0]).not.toBe(ids[1]);
  });

  it('for(): reconciles every cached object at each start and each change while running, none while stopped', async () => {
    const obj = (name: string) => ({ metadata: { namespace: 'ns', name } });
    const { cache, emit, subscribers } = fakeCache([obj('a'), obj('b')]);
    const seen: string[] = [];
    const c = new Controller({
      name: 't',
      reconciler: reconciler(async (r) => seen.push(r.name)),
    }).for(cache, CoreKinds.ConfigMap);
    expect(subscribers()).toBe(0);
    c.start();
    await tick();
    emit(obj('c'));
    await tick();
    expect(seen.sort()).toEqual(['a', 'b', 'c']);
    await c.stop();
    expect(subscribers()).toBe(0);
    emit(obj('d'));
    c.start(); // a new term: everything again
    await tick();
    await c.stop();
    expect(seen.sort()).toEqual(['a', 'a', 'b', 'b', 'c']);
  });

  it('for(): a deleted object keeps no delayed requeue, and none is scheduled once it is gone', async () => {
    const a = { metadata: { namespace: 'ns', name: 'a' } };
    const b = { metadata: { namespace: 'ns', name: 'b' } };
    const { cache, remove } = fakeCache([a, b]);
    const seen: string[] = [];
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    const c = new Controller({
      name: 't',
      reconciler: reconciler(async (r) => {
        seen.push(r.name);
        if (r.name === 'b' && seen.filter((n) => n === 'b').length === 1) await held;
        return { requeueAfterMs: 86_400_000 }; // a TTL a day away
      }),
    }).for(cache, CoreKinds.ConfigMap);
    c.start();
    await tick();
    // a reconciled and waits a day; b is still in its first reconcile.
    expect(c.queue.delayedCount).toBe(1);
    remove(a); // deleted: its day-long requeue goes, it is reconciled once more now
    await tick();
    expect(seen.filter((n) => n === 'a')).toHaveLength(2);
    expect(c.queue.delayedCount).toBe(0); // the reconcile after the delete schedules nothing
    remove(b); // deleted while its reconcile runs: that reconcile's requeue is not scheduled either
    release();
    await tick();
    expect(c.queue.delayedCount).toBe(0);
    await c.stop();
  });

  it('watches() maps changes to requests (async too); sources and startWith add requests', async () => {
    const { cache, emit } = fakeCache([]);
    let raise: (r: Request) => void = () => {};
    const seen: string[] = [];
    const c = new Controller({ name: 't', reconciler: reconciler(async (r) => seen.push(r.name)) })
      .watches(cache, CoreKinds.Service, async (o) => [req(`owner-of-${o.metadata?.name}`)])
      .source((enqueue) => {
        raise = enqueue;
        return () => {
          raise = () => {};
        };
      })
      .startWith(() => [req('singleton', '')]);
    c.start();
    emit({ metadata: { namespace: 'ns', name: 'svc' } });
    raise(req('from-source'));
    await tick();
    await settle(c);
    await c.stop();
    raise(req('after-stop'));
    expect(seen.sort()).toEqual(['from-source', 'owner-of-svc', 'singleton']);
  });
});
