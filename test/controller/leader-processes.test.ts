/**
 * Two real `berth controller` processes: exactly one leads; kill -9 of the leader → the standby
 * takes over within one lease duration and finishes the purge the leader could not. Also probes
 * and the TLS metrics endpoint of the real command.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUERY_FINALIZER } from '../../pkg/api/index.ts';
import { createNamespace, kubeConfig, kubectl } from '../support/kube.ts';
import type { Spawned } from '../support/process.ts';
import {
  type BrokerProcess,
  brokerCounts,
  create,
  getObject,
  queryObject,
  queryPath,
  seedBrokerData,
  spawnElectingController,
  startBrokerProcess,
  until,
} from './support.ts';

let ns: string;
let broker: BrokerProcess;
const admin = kubeConfig();
const procs: Spawned[] = [];
const controllerKubeconfig = join(tmpdir(), `berth-controller-kubeconfig-${process.pid}`);
const LEASE_MS = 3000;

function startControllerProcess(name: string): Spawned {
  const kubeconfig = process.env.BERTH_TEST_CONTROLLER_KUBECONFIG;
  const p = spawnElectingController({
    namespace: ns,
    name,
    kubeconfig,
    brokerUrl: broker.url,
    leaseMs: LEASE_MS,
  });
  procs.push(p);
  return p;
}

const ports = async (p: Spawned) => {
  const line = await p.waitForLine(/"msg":"ready"/, 60_000);
  return JSON.parse(line) as { probesPort: number; metricsPort: number; pid: number };
};

function httpsGet(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    // The metrics certificate is self-signed when none is given.
    const r = request({ host: '127.0.0.1', port, path, rejectUnauthorized: false }, (res) => {
      let body = '';
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    r.on('error', reject);
    r.end();
  });
}

const leaseHolder = async () =>
  (
    await getObject<{ spec?: { holderIdentity?: string } }>(
      admin,
      `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/berth-controller`,
    )
  )?.spec?.holderIdentity;

beforeAll(async () => {
  ns = await createNamespace('ctl-leader');
  broker = await startBrokerProcess();
  // The processes run as the controller identity (its ClusterRole from hack/local-rbac.yaml).
  const kc = kubeConfig('controller');
  writeFileSync(controllerKubeconfig, kc.exportConfig(), { mode: 0o600 });
  process.env.BERTH_TEST_CONTROLLER_KUBECONFIG = controllerKubeconfig;
  await create(admin, 'memories', {
    kind: 'Memory',
    metadata: { name: 'default', namespace: ns },
    spec: { address: { value: broker.url } },
  });
});

afterAll(async () => {
  for (const p of procs) if (p.proc.exitCode === null) p.proc.kill('SIGKILL');
  await Promise.all(procs.map((p) => p.exited));
  await broker?.remove();
  rmSync(controllerKubeconfig, { force: true }); // it holds the controller identity's token
});

describe('two controller processes', () => {
  it('exactly one leads; probes and TLS metrics answer; kill -9 → the standby takes over and finishes the purge', async () => {
    const a = startControllerProcess('ctl-a');
    const b = startControllerProcess('ctl-b');
    const [pa, pb] = await Promise.all([ports(a), ports(b)]);
    const holder = await until('a lease holder', leaseHolder);
    const [leader, standby, lp, sp] = holder.startsWith('ctl-a') ? [a, b, pa, pb] : [b, a, pb, pa];
    expect(holder).toMatch(/^ctl-[ab]_/);
    expect(standby.output()).not.toMatch(/became leader/);

    const health = await (await fetch(`http://127.0.0.1:${sp.probesPort}/readyz`)).json();
    expect(health.status).toBe('ready');
    expect(health.isLeader).toBe(false);
    expect(health.informers.find((i: { name: string }) => i.name === 'queries')).toMatchObject({
      synced: true,
      failing: false,
    });
    expect((await fetch(`http://127.0.0.1:${lp.probesPort}/healthz`)).status).toBe(200);
    const metrics = await httpsGet(lp.metricsPort, '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.body).toMatch(/^berth_controller_leader 1$/m);
    expect(metrics.body).toMatch(/berth_controller_informer_last_event_age_seconds\{resource="queries"\}/);
    expect(metrics.body).toMatch(/berth_controller_workqueue_depth\{controller="query"\}/);
    expect((await httpsGet(sp.metricsPort, '/metrics')).body).toMatch(/^berth_controller_leader 0$/m);

    // A purge the leader cannot finish: the broker is down when the Query is deleted.
    await create(admin, 'queries', queryObject(ns, 'pending-purge'));
    await until('finalizer', async () =>
      (
        await getObject<{ metadata: { finalizers?: string[] } }>(admin, queryPath(ns, 'pending-purge'))
      )?.metadata.finalizers?.includes(QUERY_FINALIZER),
    );
    await seedBrokerData(broker.url, 'pending-purge', ns);
    await broker.stop();
    await kubectl(['delete', 'query', 'pending-purge', '-n', ns, '--wait=false']);
    await leader.waitForLine(/purge failed; retrying/, 20_000);

    leader.proc.kill('SIGKILL');
    const killedAt = Date.now();
    await broker.start();
    await standby.waitForLine(/became leader/, LEASE_MS + 10_000);
    const takeoverMs = Date.now() - killedAt;
    expect(takeoverMs).toBeLessThan(LEASE_MS + 1500); // one lease duration, plus a retry period and process lag
    await until(
      'query gone',
      async () => (await getObject(admin, queryPath(ns, 'pending-purge'))) === undefined,
      15_000,
    );
    expect(await brokerCounts(broker.url, 'pending-purge')).toEqual({ messages: 0, events: 0 });
    expect(await leaseHolder()).toBe(
      JSON.parse(
        standby
          .output()
          .split('\n')
          .find((l) => /became leader/.test(l)) ?? '{}',
      ).identity,
    );
  });
});
