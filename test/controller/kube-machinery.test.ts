/** pkg/kube machinery against the real API server: informer, supervisor, leases, client helpers. */
import type { KubernetesObject, V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kinds, type Query } from '../../pkg/api/index.ts';
import { applyObject } from '../../pkg/kube/apply.ts';
import { InformerCache } from '../../pkg/kube/cache.ts';
import { addFinalizer, patchStatus, removeFinalizer } from '../../pkg/kube/client/index.ts';
import { KubeError } from '../../pkg/kube/errors.ts';
import { Informer } from '../../pkg/kube/informer.ts';
import { CoreKinds, type KindRef } from '../../pkg/kube/kinds.ts';
import { LeaderElector } from '../../pkg/kube/leader.ts';
import { rawRequest } from '../../pkg/kube/raw.ts';
import { SupervisedInformer } from '../../pkg/kube/supervisor.ts';
import { createNamespace, kubeConfig } from '../support/kube.ts';
import { create, liveClient, queryObject, until } from './support.ts';

let ns: string;
const admin = kubeConfig();
const controllerKc = kubeConfig('controller');
const adminClient = liveClient(admin);
const controllerClient = liveClient(controllerKc);
const ConfigMap = CoreKinds.ConfigMap as KindRef<V1ConfigMap>;
const mergeData = (name: string, data: Record<string, string>) =>
  adminClient.patch(ConfigMap, { namespace: ns, name }, { type: 'merge', patch: { data } });

const cmPath = (name?: string) => `/api/v1/namespaces/${ns}/configmaps${name ? `/${name}` : ''}`;
async function putConfigMap(name: string, data: Record<string, string>) {
  const res = await rawRequest(admin, { method: 'POST', path: cmPath(), body: { metadata: { name }, data } });
  if (res.status >= 300) throw new Error(res.body);
}

beforeAll(async () => {
  ns = await createNamespace('ctl-kube');
});

describe('Informer + supervisor', () => {
  let sup: SupervisedInformer<V1ConfigMap> | undefined;
  afterAll(async () => sup?.stop());

  it('lists, follows adds/updates/deletes, strips managedFields, and heals on relist', async () => {
    await putConfigMap('before', { a: '1' });
    const events: string[] = [];
    const inf = new Informer<V1ConfigMap>({ kc: admin, path: cmPath(), pageSize: 1 });
    inf.addHandlers({
      onAdd: (o) => events.push(`add:${o.metadata?.name}`),
      onUpdate: (_, o) => events.push(`update:${o.metadata?.name}:${o.data?.a}`),
      onDelete: (o) => events.push(`delete:${o.metadata?.name}`),
    });
    sup = new SupervisedInformer('configmaps', inf, { watchdogMs: 60_000 });
    sup.start();
    await inf.waitForSync();
    expect(inf.get(ns, 'before')?.kind).toBe('ConfigMap'); // list items get their kind back
    expect(inf.get(ns, 'before')?.metadata?.managedFields).toBeUndefined();
    await putConfigMap('during', { a: '1' });
    await mergeData('during', { a: '2' });
    await rawRequest(admin, { method: 'DELETE', path: cmPath('before') });
    await until('watch events', () => events.includes('delete:before'));
    expect(events).toEqual(['add:before', 'add:during', 'update:during:2', 'delete:before']);
    inf.relist();
    await until('a relist', () => inf.lists >= 2);
    expect(inf.list(ns).map((o) => o.metadata?.name)).toEqual(['during']);
    expect(sup.health().synced).toBe(true);
    expect(sup.health().lastEventAgeMs).toBeLessThan(10_000);
  });

  it('restarts an informer that stopped on an error (403) with backoff, and recovers once allowed', async () => {
    // The controller identity may not list pods: the informer fails until a Role allows it.
    const inf = new Informer({ kc: controllerKc, path: `/api/v1/namespaces/${ns}/pods` });
    const s = new SupervisedInformer('pods', inf, { backoffInitialMs: 50, backoffMaxMs: 200 });
    s.start();
    try {
      await until('restarts', () => s.health().restarts >= 3);
      expect(s.health()).toMatchObject({ synced: false, failing: true });
      expect(s.health().lastError).toMatch(/forbidden/i);
      const rbac = (kind: string, body: object) =>
        rawRequest(admin, {
          method: 'POST',
          path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/${kind}`,
          body,
        });
      await rbac('roles', {
        metadata: { name: 'pods' },
        rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['list', 'watch'] }],
      });
      await rbac('rolebindings', {
        metadata: { name: 'pods' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pods' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'controller' }],
      });
      await inf.waitForSync();
      await until('healthy', () => !s.health().failing);
    } finally {
      await s.stop();
    }
  });

  it('the watchdog relists an informer that heard nothing for the configured time', async () => {
    const inf = new Informer({ kc: admin, path: `/api/v1/namespaces/${ns}/secrets` });
    const s = new SupervisedInformer('quiet', inf, { watchdogMs: 300 });
    s.start();
    try {
      await until('watchdog relists', () => inf.lists >= 3, 15_000);
      expect(s.health().relists).toBeGreaterThanOrEqual(2);
    } finally {
      await s.stop();
    }
  });

  it('the cache registry waits for an object version (read-your-writes)', async () => {
    const cache = new InformerCache({ kc: admin, namespace: ns });
    cache.register(ConfigMap);
    cache.start();
    try {
      await cache.waitForSync(10_000);
      const res = await rawRequest(admin, {
        method: 'POST',
        path: cmPath(),
        body: { metadata: { name: 'ryw' } },
      });
      const rv = res.json<KubernetesObject>().metadata?.resourceVersion;
      await cache.waitForVersion(ConfigMap, ns, 'ryw', rv, { timeoutMs: 10_000 });
      expect(cache.get(ConfigMap, ns, 'ryw')?.metadata?.resourceVersion).toBe(rv);
      expect(cache.list(ConfigMap, 'elsewhere')).toBeUndefined();
      const view = cache.view(ConfigMap, ns, (o) => o.metadata?.name === 'ryw');
      expect(view.list().map((o) => o.metadata?.name)).toEqual(['ryw']);
      expect(view.get('during')).toBeUndefined();
      let changes = 0;
      const off = view.onChange(() => changes++);
      await mergeData('ryw', { x: '1' });
      await until('a change notification', () => changes > 0);
      off();
    } finally {
      await cache.stop();
    }
  });
});

describe('client helpers', () => {
  it('merge-patches status, adds/removes finalizers conditionally, maps errors to KubeError', async () => {
    const q = (await create(admin, 'queries', queryObject(ns, 'helpers'))) as Query;
    const withStatus = await patchStatus(controllerClient, Kinds.Query, q, { phase: 'running' });
    expect((withStatus as { status?: { phase?: string } }).status?.phase).toBe('running');
    const withF = await addFinalizer(controllerClient, Kinds.Query, withStatus, 'berth.dev/test');
    expect(withF.metadata?.finalizers).toEqual(['berth.dev/test']);
    // A stale copy cannot clobber the list: 409 Conflict.
    const stale = await addFinalizer(controllerClient, Kinds.Query, q, 'berth.dev/other').catch(
      (e: unknown) => e,
    );
    expect(stale).toBeInstanceOf(KubeError);
    expect((stale as KubeError).reason).toBe('Conflict');
    const without = await removeFinalizer(controllerClient, Kinds.Query, withF, 'berth.dev/test');
    expect(without?.metadata?.finalizers ?? []).toEqual([]);
    const missing = await controllerClient
      .patch(Kinds.Query, { namespace: ns, name: 'nope' }, { type: 'merge', patch: { spec: {} } })
      .catch((e: unknown) => e);
    expect((missing as KubeError).reason).toBe('NotFound');
  });

  it('server-side apply with a field manager', async () => {
    const cm = await applyObject(
      controllerClient,
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'ssa', namespace: ns },
        data: { k: 'v' },
      } as V1ConfigMap,
      { fieldManager: 'berth-test', force: true },
    );
    expect(cm.metadata?.managedFields?.map((f) => f.manager)).toEqual(['berth-test']);
  });
});

describe('Lease leader election', () => {
  const fast = { leaseDurationMs: 2000, renewDeadlineMs: 1500, retryPeriodMs: 200 };
  const elector = (identity: string, log: string[]) =>
    new LeaderElector({
      client: controllerClient,
      namespace: ns,
      name: 'test-lease',
      identity,
      ...fast,
      onStartedLeading: () => log.push(`${identity}:start`),
      onStoppedLeading: () => log.push(`${identity}:stop`),
    });

  it('exactly one of two leads; a stolen lease stops the leader at once; a released lease passes over', async () => {
    const log: string[] = [];
    const a = elector('a', log);
    const b = elector('b', log);
    a.start();
    await until('a leads', () => a.isLeader);
    b.start();
    await until('b sees a', () => b.leader === 'a');
    expect(b.isLeader).toBe(false);
    // Someone else takes the lease: the leader must notice at its next renewal and stop.
    const path = `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/test-lease`;
    const lease = (await rawRequest(admin, { path })).json<{ spec: Record<string, unknown> }>();
    const t0 = Date.now();
    await rawRequest(admin, {
      method: 'PUT',
      path,
      body: {
        ...lease,
        spec: {
          ...lease.spec,
          holderIdentity: 'intruder',
          renewTime: new Date().toISOString().replace('Z', '000Z'),
        },
      },
    });
    await until('a stops', () => !a.isLeader);
    expect(Date.now() - t0).toBeLessThan(fast.retryPeriodMs * 3 + 500);
    // The intruder never renews: within one lease duration someone takes over.
    await until('someone takes over', () => a.isLeader || b.isLeader, fast.leaseDurationMs + 3000);
    const leader = a.isLeader ? a : b;
    const other = leader === a ? b : a;
    await leader.stop(); // releases
    const t1 = Date.now();
    await until('the other takes over', () => other.isLeader, 3000);
    expect(Date.now() - t1).toBeLessThan(fast.leaseDurationMs);
    await other.stop();
    expect(log.filter((l) => l.endsWith(':start')).length).toBe(
      log.filter((l) => l.endsWith(':stop')).length,
    );
  });
});
