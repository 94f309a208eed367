/**
 * The API service's fuzz run with the service in a process of its own (`berth api`, as deployed),
 * so its memory is measured alone: RSS from /proc and the live heap through the inspector, sampled
 * across the run; every request goes over the socket. Counts every bad answer (5xx, stack traces)
 * instead of stopping at the first.
 * `--all-namespaces` runs it as `berth up` does: serving what its identity may, its cache watching
 * every namespace (by default it is confined to its namespace, as the tenant overlay installs it).
 * `--up` measures `berth up` instead (API, controller, engine and broker in one process, the admin
 * identity, unconfined).
 * `--only <regex>` keeps the operations whose `METHOD /path` matches, `--batch n` sends n at once
 * (default 48): a narrow, wide run hunts races on a few routes.
 * `--snapshot <file>` writes heap snapshots of the service after the warm-up (`<file>` with `.start`)
 * and at the end, to compare what the run left.
 * Usage: node test/fuzz/api-process.ts [--cases 20000] [--samples 10] [--seed n] [--all-namespaces]
 *   [--only regex] [--batch 48] [--out file.json]
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { brokerConfig } from '../../pkg/broker/config.ts';
import { startBroker } from '../../pkg/broker/server.ts';
import { projectRoot, startControlPlane } from '../../pkg/kube/controlplane/index.ts';
import { rawRequest } from '../../pkg/kube/raw.ts';
import { createLogger } from '../../pkg/log/index.ts';
import { spawnBerth } from '../support/process.ts';
import { gatewayVocabulary } from './gateway-vocab.ts';
import { connectInspector, INSPECTOR_LINE } from './inspector.ts';
import { operations, requests } from './openapi.ts';
import { type FuzzStats, fuzz } from './runner.ts';
import { seedCollections } from './seed.ts';

const { values } = parseArgs({
  options: {
    cases: { type: 'string', default: '20000' },
    samples: { type: 'string', default: '10' },
    seed: { type: 'string' },
    out: { type: 'string' },
    'all-namespaces': { type: 'boolean', default: false },
    up: { type: 'boolean', default: false },
    snapshot: { type: 'string' },
    only: { type: 'string' },
    batch: { type: 'string', default: '48' },
  },
});
const CASES = Number(values.cases);
const SAMPLES = Number(values.samples);
const NS = 'fuzz-api';

const cp = await startControlPlane({ crdDir: join(projectRoot(), 'crds') });
const dir = mkdtempSync(join(tmpdir(), 'berth-fuzz-api-'));
const admin = new KubeConfig();
admin.loadFromFile(cp.kubeconfigPath);
await rawRequest(admin, { method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: NS } } });
// `berth api` with the API service's own identity, as deployed.
const gateway = new KubeConfig();
gateway.loadFromFile(cp.kubeconfigPath);
gateway.setCurrentContext('berth-local-gateway');
// Unconfined, the instance serves its context's namespace.
for (const c of gateway.contexts) if (c.name === 'berth-local-gateway') Object.assign(c, { namespace: NS });
const kubeconfig = join(dir, 'kubeconfig');
writeFileSync(kubeconfig, gateway.exportConfig(), { mode: 0o600 });
const broker = await startBroker(
  { ...brokerConfig(), port: 0, host: '127.0.0.1' },
  createLogger({ level: 'silent' }),
);
const confine = values['all-namespaces'] ? [] : ['--namespace', NS];
const flags = `--inspect=127.0.0.1:0 ${process.env.BERTH_NODE_FLAGS ?? ''}`;
const common = {
  ...process.env,
  AUTH_MODE: 'open',
  LOG_LEVEL: 'info',
  BODY_LIMIT_BYTES: String(1 << 20),
  COMPAT_WAIT_TIMEOUT_SECONDS: '2',
  BERTH_NODE_FLAGS: flags,
};
const api = values.up
  ? spawnBerth(
      [
        'up',
        ...confine,
        '--api-port',
        '0',
        '--broker-port',
        '0',
        '--dashboard-port',
        '0',
        '--state-dir',
        join(dir, 'up'),
      ],
      { ...common, KUBECONFIG: cp.kubeconfigPath },
    )
  : spawnBerth(['api', '--port', '0', ...confine], {
      ...common,
      KUBECONFIG: kubeconfig,
      BROKER_URL: broker.url,
    });
const stop = async () => {
  // What the API server logged about failures it answered 5xx (its own view of a 500).
  const log = readFileSync(join(cp.stateDir, 'logs', 'kube-apiserver.log'), 'utf8').split('\n');
  const internal = log.filter((l) => /not an metav1.Status|status=5\d\d|Internal error|code=5\d\d/i.test(l));
  const kinds = new Map<string, number>();
  for (const l of internal) {
    const what = (/err="([^"\\]*(?:\\.[^"\\]*)*)"/.exec(l)?.[1] ?? l).replace(
      /\\"[^"]*\\"|0x[0-9a-f]+|\d+/g,
      '…',
    );
    kinds.set(what, (kinds.get(what) ?? 0) + 1);
  }
  console.log(`kube-apiserver log: ${log.length} lines, ${internal.length} about internal errors`);
  for (const [what, n] of kinds) console.log(`  ${n}× ${what.slice(0, 400)}`);
  api.proc.kill('SIGTERM');
  await api.exited;
  await broker.close();
  await cp.stop();
};
try {
  const inspector = await connectInspector(
    INSPECTOR_LINE.exec(await api.waitForLine(INSPECTOR_LINE))?.[1] ?? '',
  );
  const url = values.up
    ? (JSON.parse(await api.waitForLine(/"msg":"ready"/, 180_000)) as { api: string }).api
    : `http://127.0.0.1:${(JSON.parse(await api.waitForLine(/"msg":"api listening"/, 120_000)) as { port: number }).port}`;
  const pid = api.proc.pid as number;
  const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) * 1024;
  const errorLog = () =>
    api
      .output()
      .split('\n')
      .filter((l) => /"level":"(error|fatal)"/.test(l));

  const names = ['fz-a', 'fz-b'];
  const vocab = gatewayVocabulary(NS, names);
  const ops = operations(await (await fetch(`${url}/openapi.json`)).json());
  const only = values.only ? new RegExp(values.only) : undefined;
  const arb = requests(only ? ops.filter((o) => only.test(`${o.method} ${o.path}`)) : ops, vocab);
  const batch = Number(values.batch);
  const missed = await seedCollections(url, ops, vocab, NS);
  // A measurement, not the suite's check (gateway.test.ts requires every collection seeded).
  if (missed.length) console.warn(`collections not seeded: ${missed.join(', ')}`);
  const target = { url, fetch: (r: Request) => fetch(r) };
  const baseSeed = Number(values.seed ?? Date.now() % 2 ** 31);
  await fuzz(target, arb, { cases: 500, socketEvery: 1, keepGoing: true, seed: baseSeed - 1 }).catch(
    () => {},
  );

  const mb = (x: number) => Math.round(x / 1e5) / 10;
  const samples: Array<{ cases: number; rssMB: number; heapMB: number }> = [];
  const sample = async (cases: number) => {
    const heap = await inspector.liveHeap();
    samples.push({ cases, rssMB: mb(rss()), heapMB: mb(heap) });
    console.log(JSON.stringify(samples.at(-1)));
  };
  await sample(0);
  // A snapshot after the warm-up too, so what the run added can be told from what was there.
  if (values.snapshot) await inspector.snapshot(values.snapshot.replace(/(\.heapsnapshot)?$/, '.start$1'));
  const total: Pick<FuzzStats, 'byStatus' | 'bad'> & { cases: number } = { cases: 0, byStatus: {}, bad: [] };
  const per = Math.ceil(CASES / SAMPLES);
  for (let i = 0; i < SAMPLES; i++) {
    const stats = await fuzz(target, arb, {
      cases: per,
      batch,
      socketEvery: 1,
      keepGoing: true,
      seed: baseSeed + i,
      errorLog,
    }).catch(
      (err: Error & { stats?: FuzzStats }) => err.stats ?? { cases: 0, byStatus: {}, bad: [err.message] },
    );
    total.cases += stats.cases;
    for (const [s, n] of Object.entries(stats.byStatus))
      total.byStatus[Number(s)] = (total.byStatus[Number(s)] ?? 0) + n;
    total.bad.push(...stats.bad);
    await sample(total.cases);
  }
  const memory = await inspector.evaluate<Record<string, number>>('process.memoryUsage()');
  const spaces = await inspector.evaluate<Array<Record<string, number | string>>>(
    "process.getBuiltinModule('v8').getHeapSpaceStatistics().map(s => ({ space: s.space_name, sizeMB: Math.round(s.space_size / 1e6), usedMB: Math.round(s.space_used_size / 1e6) }))",
  );
  if (values.snapshot) await inspector.snapshot(values.snapshot);
  inspector.close();
  const fiveXX = total.bad.filter((b) => b.startsWith('answered 5'));
  const summary = {
    seed: baseSeed,
    cases: total.cases,
    byStatus: total.byStatus,
    bad: total.bad.length,
    fiveXX: fiveXX.length,
    rssGrowthMB: mb((samples.at(-1)?.rssMB ?? 0) * 1e6 - (samples[0]?.rssMB ?? 0) * 1e6),
    heapGrowthMB: mb((samples.at(-1)?.heapMB ?? 0) * 1e6 - (samples[0]?.heapMB ?? 0) * 1e6),
    samples,
    memoryMB: Object.fromEntries(Object.entries(memory).map(([k, v]) => [k, mb(v)])),
    spaces,
  };
  console.log(JSON.stringify(summary, null, 1));
  for (const b of total.bad.slice(0, 30)) console.log(b.slice(0, 3000));
  if (values.out) writeFileSync(values.out, JSON.stringify({ ...summary, badAnswers: total.bad }, null, 1));
} finally {
  await stop();
}
