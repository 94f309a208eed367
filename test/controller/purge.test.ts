import type { CoreV1Event } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kinds, QUERY_FINALIZER } from '../../pkg/api/index.ts';
import { type RunningController, startController } from '../../pkg/controller/index.ts';
import { rawRequest } from '../../pkg/kube/raw.ts';
import { createLogger } from '../../pkg/log/index.ts';
import { createNamespace, kubeConfig, kubectl } from '../support/kube.ts';
import {
  type BrokerProcess,
  brokerCounts,
  create,
  queryObject,
  seedBrokerData,
  startBrokerProcess,
  until,
} from './support.ts';

const GRACE_MS = 10_000;
let ns: string;
let broker: BrokerProcess;
let ctl: RunningController;
const admin = kubeConfig();

const finalized = (name: string) =>
  ctl.caches.waitFor(Kinds.Query, ns, name, (o) => !!o?.metadata?.finalizers?.includes(QUERY_FINALIZER), {
    timeoutMs: 15_000,
  });
const gone = (name: string, timeoutMs: number) =>
  ctl.caches.waitFor(Kinds.Query, ns, name, (o) => o === undefined, { timeoutMs });

async function newQueryWithData(name: string): Promise<void> {
  await create(admin, 'queries', queryObject(ns, name));
  await finalized(name);
  await seedBrokerData(broker.url, name, ns);
  expect(await brokerCounts(broker.url, name)).toEqual({ messages: 1, events: 1 });
}

beforeAll(async () => {
  ns = await createNamespace('ctl-purge');
  broker = await startBrokerProcess();
  ctl = await startController({
    kc: kubeConfig('controller'),
    namespace: ns,
    brokerUrl: broker.url,
    leaderElection: false,
    probes: false,
    metrics: false,
    query: { purgeGraceMs: GRACE_MS, purgeRetryInitialMs: 100, purgeRetryMaxMs: 400 },
    logger: createLogger({ level: 'silent' }),
  });
  // The broker is also the namespace's default Memory (the reference memory backend).
  const applied = await kubectl(
    ['apply', '-n', ns, '-f', '-'],
    `apiVersion: berth.dev/v1alpha1\nkind: Memory\nmetadata: {name: default}\nspec: {address: {value: "${broker.url}"}}\n`,
  );
  expect(applied.code, applied.stderr).toBe(0);
  await ctl.caches.waitFor(
    Kinds.Memory,
    ns,
    'default',
    (o) => !!(o as { status?: { lastResolvedAddress?: string } })?.status?.lastResolvedAddress,
    {
      timeoutMs: 15_000,
    },
  );
});

afterAll(async () => {
  await ctl?.stop();
  await broker?.remove();
});

describe('Query deletion purges broker data', () => {
  it('kubectl delete → messages and events gone, finalizer released, other queries untouched', async () => {
    await newQueryWithData('keep');
    await newQueryWithData('drop');
    const t0 = Date.now();
    const del = await kubectl(['delete', 'query', 'drop', '-n', ns, '--wait=false']);
    expect(del.code, del.stderr).toBe(0);
    await gone('drop', 10_000);
    const ms = Date.now() - t0;
    expect(await brokerCounts(broker.url, 'drop')).toEqual({ messages: 0, events: 0 });
    expect(await brokerCounts(broker.url, 'keep')).toEqual({ messages: 1, events: 1 });
    expect(ms).toBeLessThan(5000);
  });

  it('broker down during deletion → retried, then purged when it is back', async () => {
    await newQueryWithData('retry');
    await broker.stop(); // SIGTERM: the broker flushes its data dir, so what it held survives
    await kubectl(['delete', 'query', 'retry', '-n', ns, '--wait=false']);
    const attempts = await until('several failed purge attempts', () =>
      ctl.queries.pendingPurges().find((p) => p.attempts >= 3),
    );
    expect(attempts.failed.join(' ')).toMatch(/ECONNREFUSED/);
    expect(ctl.caches.get(Kinds.Query, ns, 'retry')?.metadata?.finalizers).toContain(QUERY_FINALIZER);
    await broker.start();
    await gone('retry', GRACE_MS);
    expect(await brokerCounts(broker.url, 'retry')).toEqual({ messages: 0, events: 0 });
    expect(await brokerCounts(broker.url, 'keep')).toEqual({ messages: 1, events: 1 });
  });

  it('broker down past the grace period → finalizer released with a Warning event naming what was not purged', async () => {
    await newQueryWithData('abandoned');
    await broker.stop(); // SIGTERM: the broker flushes its data dir, so what it held survives
    const t0 = Date.now();
    await kubectl(['delete', 'query', 'abandoned', '-n', ns, '--wait=false']);
    await gone('abandoned', GRACE_MS + 10_000);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(GRACE_MS - 1500); // deletionTimestamp has 1 s precision
    const res = await rawRequest(admin, {
      path: `/api/v1/namespaces/${ns}/events?fieldSelector=involvedObject.name=abandoned`,
    });
    const events = res.json<{ items: CoreV1Event[] }>().items;
    const warning = events.find((e) => e.reason === 'PurgeIncomplete');
    expect(warning?.type).toBe('Warning');
    expect(warning?.involvedObject.kind).toBe('Query');
    expect(warning?.message).toMatch(/grace period/);
    expect(warning?.message).toMatch(/messages via Memory default/);
    expect(warning?.message).toMatch(/events at broker/);
    await broker.start();
    // Nothing purged it: the data is still there, which is exactly what the event reports.
    expect(await brokerCounts(broker.url, 'abandoned')).toEqual({ messages: 1, events: 1 });
  });
});
