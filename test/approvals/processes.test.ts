/**
 * Durability of a pause (issue 30 item 2) with real `berth controller` processes on the real API
 * server: the demo model asks for a tool that needs approval (an HTTP tool served here, which
 * counts its calls), the Query waits, and then
 * - the only controller is killed (-9) while it waits, the decision comes through the API, a new
 *   controller resumes it;
 * - of two leader-electing controllers the leader is killed while it waits, the standby resumes it.
 * Each time the tool runs exactly once and the Query ends done with the decision recorded.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Query } from '../../pkg/api/index.ts';
import {
  type BrokerProcess,
  create,
  getObject,
  queryPath,
  startBrokerProcess,
  until,
} from '../controller/support.ts';
import { type FakeToolServer, startFakeTool } from '../fixtures/fake-tool.ts';
import { type RunningGateway, startGateway } from '../gateway/harness.ts';
import { createNamespace, kubeConfig } from '../support/kube.ts';
import { type Spawned, spawnBerth } from '../support/process.ts';
import { decide } from './support.ts';

let ns: string;
let broker: BrokerProcess;
let tools: FakeToolServer;
let api: RunningGateway;
const admin = kubeConfig();
const procs: Spawned[] = [];
const kubeconfigFile = join(tmpdir(), `berth-approvals-controller-${process.pid}`);
const LEASE_MS = 3000;
// Two controller starts (each loads the engine and syncs its informers) per test: on a loaded
// 2-core machine that alone can take half a minute.

function startController(name: string, leaderElect = true): Spawned {
  const args = ['controller', '--namespace', ns, '--port', '0', '--metrics-port', '0'];
  if (leaderElect)
    args.push('--lease-duration', `${LEASE_MS}ms`, '--renew-deadline', '2s', '--retry-period', '250ms');
  else args.push('--no-leader-elect');
  const p = spawnBerth(args, {
    ...process.env,
    KUBECONFIG: kubeconfigFile,
    BROKER_URL: broker.url,
    POD_NAMESPACE: ns,
    LOG_LEVEL: 'info',
    HOSTNAME: name,
  });
  procs.push(p);
  return p;
}

const ready = (p: Spawned) => p.waitForLine(/"msg":"ready"/, 60_000);
const kill = async (p: Spawned) => {
  p.proc.kill('SIGKILL');
  await p.exited;
};
const getQuery = (name: string) => getObject<Query>(admin, queryPath(ns, name));
const phaseOf = async (name: string, phase: string) => {
  const q = await getQuery(name);
  if (q?.status?.phase === 'error') throw new Error(`query ${name} failed: ${q.status.message}`);
  return q?.status?.phase === phase ? q : undefined;
};
const wipes = (what: string) =>
  tools.calls.filter((c) => c.path === '/wipe' && (c.body as { what?: string })?.what === what).length;

/**
 * The Memory is resolved by the controller that just started. A Query created before that would
 * wait pending (MemoryNotReady) and run once it is (test/controller/dependency-wait.test.ts); waiting
 * here keeps this test's timings about the pause alone.
 */
async function memoryResolved(): Promise<void> {
  await until(
    'Memory default resolved',
    async () =>
      (
        await getObject<{ status?: { lastResolvedAddress?: string } }>(
          admin,
          `/apis/berth.dev/v1alpha1/namespaces/${ns}/memories/default`,
        )
      )?.status?.lastResolvedAddress,
    60_000,
    100,
  );
}

async function pausedQuery(name: string, what: string): Promise<string> {
  await memoryResolved();
  await create(admin, 'queries', {
    kind: 'Query',
    metadata: { name, namespace: ns },
    spec: { input: `Use wipe: ${what}`, target: { type: 'agent', name: 'operator' }, ttl: '1h' },
  });
  const q = await until(`${name} input-required`, () => phaseOf(name, 'input-required'), 60_000, 100);
  const id = q.status?.pendingApprovals?.[0]?.id;
  expect(q.status?.pendingApprovals?.[0]).toMatchObject({ tool: 'wipe', arguments: { what } });
  expect(wipes(what)).toBe(0);
  return id as string;
}

async function expectDoneOnce(name: string, what: string): Promise<void> {
  const q = await until(`${name} done`, () => phaseOf(name, 'done'), 60_000, 100);
  expect(q.status?.response?.content).toContain(`"what":"${what}"`);
  expect(q.status?.approvals).toHaveLength(1);
  // Nothing runs it again: a few reconciles later the tool still ran once.
  await new Promise((r) => setTimeout(r, 1500));
  expect(wipes(what)).toBe(1);
}

beforeAll(async () => {
  ns = await createNamespace('approvals-proc');
  [broker, tools] = await Promise.all([startBrokerProcess(), startFakeTool()]);
  writeFileSync(kubeconfigFile, kubeConfig('controller').exportConfig(), { mode: 0o600 });
  api = await startGateway({ kc: kubeConfig('gateway'), namespace: ns });
  const objects = [
    { kind: 'Memory', name: 'default', plural: 'memories', spec: { address: { value: broker.url } } },
    { kind: 'Model', name: 'demo', plural: 'models', spec: { type: 'demo', model: 'berth-demo' } },
    {
      kind: 'Tool',
      name: 'wipe',
      plural: 'tools',
      spec: {
        http: { url: `${tools.url}/wipe`, method: 'POST' },
        inputSchema: { type: 'object', properties: { what: { type: 'string' } }, required: ['what'] },
        approval: { required: true },
      },
    },
    {
      kind: 'Agent',
      name: 'operator',
      plural: 'agents',
      spec: { prompt: 'You operate.', modelRef: { name: 'demo' }, tools: [{ name: 'wipe' }] },
    },
  ];
  for (const o of objects)
    await create(admin, o.plural, { kind: o.kind, metadata: { name: o.name, namespace: ns }, spec: o.spec });
});

// A test that failed midway leaves its controllers: the next test must not find one holding the lease.
afterEach(async () => {
  for (const p of procs) if (p.proc.exitCode === null) p.proc.kill('SIGKILL');
  await Promise.all(procs.map((p) => p.exited));
});

afterAll(async () => {
  for (const p of procs) if (p.proc.exitCode === null) p.proc.kill('SIGKILL');
  await Promise.all(procs.map((p) => p.exited));
  await api?.close();
  await tools?.close();
  await broker?.remove();
  rmSync(kubeconfigFile, { force: true }); // it holds the controller identity's token
});

describe('a paused query survives its controller', () => {
  it('killed while waiting: the decision comes, a new controller resumes it once', async () => {
    const a = startController('ctl-restart-a');
    await ready(a);
    const id = await pausedQuery('q-restart', 'old rows');
    await kill(a);
    const res = await decide(api.url, ns, 'q-restart', { id, decision: 'approve' });
    expect(res.status).toBe(200);
    const b = startController('ctl-restart-b');
    await ready(b);
    await expectDoneOnce('q-restart', 'old rows');
    await kill(b);
  }, 180_000);

  it('leader killed while waiting: the standby takes the lease and resumes it once', async () => {
    const c = startController('ctl-lead-c');
    const d = startController('ctl-lead-d');
    await Promise.all([ready(c), ready(d)]);
    const id = await pausedQuery('q-leader', 'stale caches');
    const holder = await until('a lease holder', async () => {
      const lease = await getObject<{ spec?: { holderIdentity?: string } }>(
        admin,
        `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/berth-controller`,
      );
      return lease?.spec?.holderIdentity;
    });
    const [leader, standby] = holder.startsWith('ctl-lead-c') ? [c, d] : [d, c];
    await kill(leader);
    const res = await decide(api.url, ns, 'q-leader', { id, decision: 'approve', reason: 'go' });
    expect(res.status).toBe(200);
    await expectDoneOnce('q-leader', 'stale caches');
    expect(standby.output()).toMatch(/query resumed after its decisions/);
    await kill(standby);
  }, 180_000);
});
