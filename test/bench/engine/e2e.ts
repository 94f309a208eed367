/**
 * Query overhead from creation to `done` (issue 5, item 8): a real `berth up` process (broker,
 * controller + engine, API; one process) on a real control plane, a fake model answering at once
 * over HTTPS in its own process. Each sample is the time from sending the Query's POST to the API
 * server until this process's watch sees `status.phase` leave running (done | error).
 *   model  target model/default
 *   agent  target agent/bench (prompt + model)
 * Both use the Memory `default` that `berth up` points at its broker (history read + append), and
 * send events and spans to the broker: the whole path a user's Query takes.
 * Usage: node test/bench/engine/e2e.ts [--queries 500] [--concurrency 1,20]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { API_VERSION } from '../../../pkg/api/index.ts';
import { projectRoot, startControlPlane } from '../../../pkg/kube/controlplane/index.ts';
import { rawRequest, rawStream } from '../../../pkg/kube/raw.ts';
import { spawnBerth } from '../../support/process.ts';
import { cpuSeconds, pct, platformPids, startFakeModelProcess } from '../support.ts';

const { values } = parseArgs({
  options: { queries: { type: 'string', default: '500' }, concurrency: { type: 'string', default: '1,20' } },
});
const TOTAL = Number(values.queries);
const LEVELS = (values.concurrency ?? '1,20').split(',').map(Number);
const NS = 'bench-e2e';
const GROUP = `/apis/${API_VERSION}/namespaces/${NS}`;
const dir = mkdtempSync(join(tmpdir(), 'berth-bench-e2e-'));
const fake = await startFakeModelProcess(join(dir, 'ca.pem'));

const cp = await startControlPlane({ crdDir: join(projectRoot(), 'crds') });
const admin = new KubeConfig();
admin.loadFromFile(cp.kubeconfigPath);
const kube = async (method: string, path: string, body?: unknown) => {
  const res = await rawRequest(admin, { method, path, body });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.body.slice(0, 300)}`);
  return res;
};
await kube('POST', '/api/v1/namespaces', { metadata: { name: NS } });
const up = spawnBerth(
  ['up', '--namespace', NS, '--api-port', '0', '--broker-port', '0', '--state-dir', join(dir, 'state')],
  {
    ...process.env,
    KUBECONFIG: cp.kubeconfigPath,
    NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem'),
    LOG_LEVEL: 'warn',
  },
);

/** Resolvers of queries waiting for their final phase, fed by one watch on the namespace. */
const waiting = new Map<string, (phase: string) => void>();
async function watchQueries(): Promise<() => void> {
  const res = await rawStream(admin, { path: `${GROUP}/queries?watch=1` });
  const lines = createInterface({ input: res });
  lines.on('line', (l) => {
    const ev = JSON.parse(l) as { object: { metadata: { name: string }; status?: { phase?: string } } };
    const phase = ev.object.status?.phase;
    if (phase === 'done' || phase === 'error' || phase === 'canceled')
      waiting.get(ev.object.metadata.name)?.(phase);
  });
  return () => res.destroy();
}

async function runOne(name: string, target: { type: string; name: string }): Promise<number> {
  const done = new Promise<string>((resolve) => waiting.set(name, resolve));
  const t = performance.now();
  await kube('POST', `${GROUP}/queries`, {
    apiVersion: API_VERSION,
    kind: 'Query',
    metadata: { name },
    spec: { input: `question ${name}`, target },
  });
  const phase = await done;
  waiting.delete(name);
  if (phase !== 'done') throw new Error(`query ${name} ended ${phase}`);
  return performance.now() - t;
}

async function measure(label: string, target: { type: string; name: string }, c: number, n: number) {
  const times: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: c }, async () => {
      while (next < n) times.push(await runOne(`${label}-c${c}-${next++}`, target));
    }),
  );
  return { times: times.sort((a, b) => a - b), qps: (n / (performance.now() - t0)) * 1000 };
}

let stopWatch = () => {};
try {
  await up.waitForLine(/API service:\s+http/, 120_000);
  const apply = (kind: string, name: string, spec: Record<string, unknown>) =>
    kube('POST', `${GROUP}/${kind.toLowerCase()}s`, {
      apiVersion: API_VERSION,
      kind,
      metadata: { name },
      spec,
    });
  await apply('Model', 'default', { type: 'openai', model: 'bench', baseUrl: fake.url });
  await apply('Agent', 'bench', { prompt: 'You are a benchmark.', modelRef: { name: 'default' } });
  stopWatch = await watchQueries();

  const pids = platformPids(cp, up.proc.pid as number, fake.proc.pid as number);
  console.log(
    `Query creation → done through berth up; node ${process.version}, ${cpus().length} cores, load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}, n=${TOTAL} per row`,
  );
  const f = (v: number) => v.toFixed(1).padStart(6);
  for (const [label, target] of [
    ['model', { type: 'model', name: 'default' }],
    ['agent', { type: 'agent', name: 'bench' }],
  ] as const) {
    for (const c of LEVELS) {
      await measure(`${label}-warm`, target, c, Math.max(50, c * 3));
      const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid)]));
      const { times, qps } = await measure(label, target, c, TOTAL);
      const cpu = Object.entries(pids)
        .map(([k, pid]) => `${k} ${(((cpuSeconds(pid) - (before[k] ?? 0)) * 1000) / TOTAL).toFixed(1)}`)
        .join(', ');
      console.log(
        `${label.padEnd(6)} c=${String(c).padEnd(3)} p50 ${f(pct(times, 50))} p90 ${f(pct(times, 90))} p99 ${f(pct(times, 99))} max ${f(times.at(-1) ?? 0)} ms  ${qps.toFixed(0)} q/s`,
      );
      console.log(`${''.padEnd(11)} CPU ms per query: ${cpu}`);
    }
  }
} finally {
  stopWatch();
  up.proc.kill('SIGINT');
  await up.exited;
  fake.proc.kill('SIGTERM');
  await cp.stop();
  rmSync(dir, { recursive: true, force: true });
}
