/**
 * Controller benchmark on a local control plane with a real `berth broker` and `berth controller`
 * processes (no engine: this measures the controller, not query execution):
 *   purge latency   DELETE of a Query (what `kubectl delete --wait=false` sends) → its messages and
 *                   events gone from the broker, p50/p99 over --purge queries (10 deletions in flight)
 *   throughput      reconciles/s while queries are created (finalizer add: API-bound) and for the
 *                   start-of-term re-reconcile of every cached Query (controller-bound)
 *   cache           RSS of a controller process holding --cache Queries, and its initial sync time
 * Targets (issue 4): purge p99 ≤ 1 s, RSS ≤ 300 MB with 10,000 Queries, initial sync ≤ 10 s.
 * Usage: node test/bench/controller/run.ts [--purge 500] [--cache 10000]
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { projectRoot, startControlPlane } from '../../../pkg/kube/controlplane/index.ts';
import { spawnBerth } from '../../support/process.ts';
import { brokerGone, counter, kube, pct, pool, rssMb, scrape, seed, startControllerProc } from './lib.ts';

const { values } = parseArgs({
  options: { purge: { type: 'string', default: '500' }, cache: { type: 'string', default: '10000' } },
});
const PURGE = Number(values.purge);
const CACHE = Number(values.cache);
const ns = 'bench';
const log = (msg: string) => console.log(`[bench] ${msg}`);

const cp = await startControlPlane({ crdDir: join(projectRoot(), 'crds') });
const broker = spawnBerth(['broker', '--port', '0'], { ...process.env, LOG_LEVEL: 'info' });
const stops: Array<() => Promise<unknown>> = [];
try {
  const brokerUrl = (JSON.parse(await broker.waitForLine(/broker listening/)) as { url: string }).url;
  const admin = new KubeConfig();
  admin.loadFromFile(cp.kubeconfigPath);
  const ctlKc = new KubeConfig();
  ctlKc.loadFromFile(cp.kubeconfigPath);
  ctlKc.setCurrentContext('berth-local-controller');
  const kubeconfig = join(tmpdir(), `berth-bench-controller-${process.pid}`);
  writeFileSync(kubeconfig, ctlKc.exportConfig());
  const env = { ...process.env, KUBECONFIG: kubeconfig, BROKER_URL: brokerUrl, POD_NAMESPACE: ns };
  const q = (name: string) => `/apis/berth.dev/v1alpha1/namespaces/${ns}/queries${name ? `/${name}` : ''}`;
  const newQuery = (name: string) =>
    kube(admin, 'POST', q(''), {
      apiVersion: 'berth.dev/v1alpha1',
      kind: 'Query',
      metadata: { name },
      spec: { input: `benchmark input of ${name}`, target: { type: 'model', name: 'default' } },
    });
  const finalized = async (prefix: string) => {
    const list = (await kube(admin, 'GET', `${q('')}?limit=100000`)) as {
      items: Array<{ metadata: { name: string; finalizers?: string[] } }>;
    };
    return list.items.filter((o) => o.metadata.name.startsWith(prefix) && o.metadata.finalizers?.length)
      .length;
  };
  const waitFinalized = async (prefix: string, n: number) => {
    while ((await finalized(prefix)) < n) await new Promise((r) => setTimeout(r, 250));
  };

  await kube(admin, 'POST', '/api/v1/namespaces', { metadata: { name: ns } });
  await kube(admin, 'POST', `/apis/berth.dev/v1alpha1/namespaces/${ns}/memories`, {
    apiVersion: 'berth.dev/v1alpha1',
    kind: 'Memory',
    metadata: { name: 'default' },
    spec: { address: { value: brokerUrl } },
  });
  const ctl1 = await startControllerProc(env, ns);
  stops.push(() => ctl1.stop());

  // Purge latency.
  log(`creating ${PURGE} queries with broker data`);
  let t = performance.now();
  const before = counter(
    await scrape(ctl1.metricsPort),
    'berth_controller_reconcile_total',
    'controller="query"',
  );
  await pool(PURGE, 16, async (i) => {
    await newQuery(`p-${i}`);
    await seed(brokerUrl, `p-${i}`, ns);
  });
  await waitFinalized('p-', PURGE);
  const createSecs = (performance.now() - t) / 1000;
  const createReconciles =
    counter(await scrape(ctl1.metricsPort), 'berth_controller_reconcile_total', 'controller="query"') -
    before;
  log(`deleting them, 10 at a time`);
  const lat: number[] = [];
  await pool(PURGE, 10, async (i) => {
    const t0 = performance.now();
    await kube(admin, 'DELETE', q(`p-${i}`));
    while (!(await brokerGone(brokerUrl, `p-${i}`))) await new Promise((r) => setTimeout(r, 5));
    lat.push(performance.now() - t0);
  });
  lat.sort((a, b) => a - b);

  // 10k queries in the cache.
  log(`creating ${CACHE} queries`);
  t = performance.now();
  await pool(CACHE, 32, (i) => newQuery(`c-${i}`).then(() => undefined));
  await waitFinalized('c-', CACHE);
  const fillSecs = (performance.now() - t) / 1000;
  await ctl1.stop();
  stops.pop();
  log('starting a fresh controller over them');
  const ctl2 = await startControllerProc(env, ns);
  stops.push(() => ctl2.stop());
  // From the leader log line's timestamp to the scrape that shows every key reconciled (scrapes every
  // 20 ms, so a short wave is over-estimated, never under-estimated).
  let reconciled = 0;
  while (reconciled < CACHE) {
    await new Promise((r) => setTimeout(r, 20));
    reconciled = counter(
      await scrape(ctl2.metricsPort),
      'berth_controller_reconcile_total',
      'controller="query"',
    );
  }
  const termSecs = (Date.now() - ctl2.leaderAt) / 1000;
  await new Promise((r) => setTimeout(r, 3000)); // let the heap settle after the startup wave
  const rss = rssMb(ctl2.pid);

  const results = {
    purge: {
      queries: PURGE,
      p50Ms: Math.round(pct(lat, 50)),
      p99Ms: Math.round(pct(lat, 99)),
      maxMs: Math.round(lat.at(-1) ?? 0),
    },
    throughput: {
      createPhaseReconcilesPerSec: Math.round(createReconciles / createSecs),
      startOfTermReconcilesPerSec: Math.round(reconciled / termSecs),
      cacheFillQueriesPerSec: Math.round(CACHE / fillSecs),
    },
    cache: { queries: CACHE, rssMb: Math.round(rss), initialSyncMs: ctl2.syncMs },
    targets: { purgeP99: pct(lat, 99) <= 1000, rss: rss <= 300, sync: ctl2.syncMs <= 10_000 },
  };
  console.log(JSON.stringify(results, null, 2));
  if (!Object.values(results.targets).every(Boolean)) process.exitCode = 1;
} finally {
  for (const s of stops) await s();
  broker.proc.kill('SIGTERM');
  await broker.exited;
  await cp.stop();
}
