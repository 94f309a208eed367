/**
 * API server restart → informers recover without a process restart. Uses its own control plane,
 * so killing kube-apiserver does not disturb the other test files.
 */
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kinds, type Memory } from '../../pkg/api/index.ts';
import { type RunningController, startController } from '../../pkg/controller/index.ts';
import type { GuardedChild } from '../../pkg/kube/controlplane/child.ts';
import { type ControlPlane, projectRoot, startControlPlane } from '../../pkg/kube/controlplane/index.ts';
import { createLogger } from '../../pkg/log/index.ts';
import { kubeConfigAt } from '../support/kube.ts';
import { killApiServer } from './apiserver.ts';
import { create, until } from './support.ts';

let cp: ControlPlane;
let restarted: GuardedChild | undefined;
let ctl: RunningController;
const ns = 'restart';

const kc = (context?: string) => kubeConfigAt(cp.kubeconfigPath, context);

beforeAll(async () => {
  cp = await startControlPlane({ crdDir: join(projectRoot(), 'crds') });
  await kc()
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: ns } } });
  ctl = await startController({
    kc: kc('berth-local-controller'),
    namespace: ns,
    leaderElection: { namespace: ns, leaseDurationMs: 4000, renewDeadlineMs: 3000, retryPeriodMs: 300 },
    // Fast restarts so the test is quick; production defaults are 1 s → 30 s.
    informers: { backoffInitialMs: 200, backoffMaxMs: 1000 },
    probes: false,
    metrics: false,
    logger: createLogger({ level: 'silent' }),
  });
  await until('leadership', () => ctl.isLeader());
}, 180_000);

afterAll(async () => {
  await ctl?.stop();
  await restarted?.stop();
  await cp?.stop();
});

describe('kube-apiserver restart', () => {
  it('informers restart, resync and keep following changes; leadership comes back', async () => {
    const admin = kc();
    await create(admin, 'memories', {
      kind: 'Memory',
      metadata: { name: 'before', namespace: ns },
      spec: { address: { value: 'http://a' } },
    });
    await ctl.caches.waitFor(
      Kinds.Memory,
      ns,
      'before',
      (o) => (o as Memory | undefined)?.status?.phase === 'ready',
      { timeoutMs: 15_000 },
    );
    const restartsBefore = ctl.caches.health().find((h) => h.name === 'memories')?.restarts ?? 0;

    const restart = await killApiServer(cp);
    // Without the API server the lease cannot be renewed: the leader stops reconciling by its renew
    // deadline (3 s here), not later.
    const down = Date.now();
    await until('stepping down', () => !ctl.isLeader(), 10_000);
    expect(Date.now() - down).toBeLessThan(3000 + 1000);
    expect(ctl.caches.health().some((h) => h.failing)).toBe(true);
    restarted = await restart();

    // A change made after the restart reaches the controller through the resumed watches.
    await create(admin, 'memories', {
      kind: 'Memory',
      metadata: { name: 'after', namespace: ns },
      spec: { address: { value: 'http://b' } },
    });
    const m = await ctl.caches.waitFor(
      Kinds.Memory,
      ns,
      'after',
      (o) => (o as Memory | undefined)?.status?.phase === 'ready',
      {
        timeoutMs: 30_000,
      },
    );
    expect((m as Memory).status?.lastResolvedAddress).toBe('http://b');
    const health = ctl.caches.health();
    expect(health.find((h) => h.name === 'memories')?.restarts).toBeGreaterThan(restartsBefore);
    await until(
      'all informers healthy',
      () => ctl.caches.health().every((h) => h.synced && !h.failing),
      30_000,
    );
    await until('leader again', () => ctl.isLeader(), 30_000);
  });
});
