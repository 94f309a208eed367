/**
 * Deletion of a Query against the FakeClient, with a fake broker (a fetch function): the purge of
 * messages (via the Memory) and events (on the broker), retries, and the release after the grace.
 */
import type { CoreV1Event } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { Kinds, type Memory, QUERY_FINALIZER, type Query } from '../../api/index.ts';
import { FakeClient, isNotFound } from '../../kube/client/index.ts';
import { EventRecorder } from '../../kube/events.ts';
import { CoreKinds, type KindRef } from '../../kube/kinds.ts';
import { createLogger } from '../../log/index.ts';
import { QueryReconciler, type QueryReconcilerOptions } from './reconciler.ts';

const REQ = { namespace: 'ns', name: 'q' };
const ctx = { signal: new AbortController().signal, logger: createLogger({ level: 'silent' }) };

/** A broker (and Memory) answering each request with `status(url)`, recording them. */
function fakeBroker(status: (url: string) => number) {
  const calls: string[] = [];
  const fetch = (async (url: string | URL, init?: RequestInit) => {
    calls.push(`${init?.method} ${url}`);
    return new Response(null, { status: status(String(url)) });
  }) as typeof globalThis.fetch;
  return { calls, fetch };
}

/** A deleted Query held by its finalizer, and the namespace's default Memory. */
async function deletedQuery(opts: QueryReconcilerOptions, status: (url: string) => number) {
  const client = new FakeClient();
  const broker = fakeBroker(status);
  const purged: boolean[] = [];
  const r = new QueryReconciler(
    {
      client,
      brokerUrl: 'http://broker/',
      recorder: new EventRecorder(client, 'test', 'test'),
      fetch: broker.fetch,
      onPurged: (_s, complete) => purged.push(complete),
    },
    { purgeRetryInitialMs: 10, purgeRetryMaxMs: 10, ...opts },
  );
  client.seed(Kinds.Memory, {
    metadata: { namespace: 'ns', name: 'default' },
    spec: { address: { value: 'http://memory' } },
    status: { phase: 'ready', lastResolvedAddress: 'http://memory/' },
  } as Memory);
  const spec = { input: 'hi', target: { type: 'model', name: 'm' } };
  client.seed(Kinds.Query, { metadata: { ...REQ, finalizers: [QUERY_FINALIZER] }, spec } as Query);
  await client.delete(Kinds.Query, REQ);
  const exists = () =>
    client.get(Kinds.Query, REQ).then(
      () => true,
      (err) => !isNotFound(err),
    );
  return { client, r, broker, purged, exists };
}

describe('QueryReconciler finalize', () => {
  it('purges messages through the Memory and events on the broker, then releases the finalizer', async () => {
    const { r, broker, purged, exists } = await deletedQuery({}, () => 200);
    expect(await r.reconcile(REQ, ctx)).toBeUndefined();
    expect(broker.calls.sort()).toEqual([
      'DELETE http://broker/events/q',
      'DELETE http://memory/queries/q/messages',
    ]);
    expect(await exists()).toBe(false);
    expect(purged).toEqual([true]);
    expect(r.pendingPurges()).toEqual([]);
  });

  it('a failed purge is retried with backoff, the finalizer held; done steps are not repeated', async () => {
    let eventsStatus = 503;
    const answer = (url: string) => (url.includes('/events/') ? eventsStatus : 200);
    const { r, broker, exists } = await deletedQuery({}, answer);
    const first = await r.reconcile(REQ, ctx);
    expect(first?.requeueAfterMs).toBeGreaterThan(0);
    expect(await exists()).toBe(true);
    expect(r.pendingPurges()[0]?.failed.join()).toMatch(/events at broker .*HTTP 503/);
    eventsStatus = 200;
    expect(await r.reconcile(REQ, ctx)).toBeUndefined();
    expect(await exists()).toBe(false);
    expect(broker.calls.filter((c) => c.includes('/messages'))).toHaveLength(1);
    expect(broker.calls.filter((c) => c.includes('/events/'))).toHaveLength(2);
  });

  it('past the grace period the finalizer is released anyway, with a Warning event naming what was left', async () => {
    const { client, r, purged, exists } = await deletedQuery({ purgeGraceMs: 0 }, () => 503);
    expect(await r.reconcile(REQ, ctx)).toBeUndefined();
    expect(await exists()).toBe(false);
    expect(purged).toEqual([false]);
    const { items } = await client.list(CoreKinds.Event as KindRef<CoreV1Event>, { namespace: 'ns' });
    expect(items.map((e) => e.reason)).toEqual(['PurgeIncomplete']);
    expect(items[0]?.message).toMatch(/not purged: messages via Memory default .*HTTP 503/);
  });
});
