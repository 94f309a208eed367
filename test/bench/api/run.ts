/**
 * API service benchmark: `node test/bench/api/run.ts` (BENCH_SECONDS, default 10; AGENTS, default 1000).
 * Boots a local control plane, creates the agents, runs `berth api` as its own process in `basic`
 * mode, and measures an authenticated `GET /v1/namespaces/<ns>/agents` (HTTP Basic, key already
 * verified once so the verified-key cache answers) with autocannon at concurrency 50.
 * Prints a table and writes results.json beside this file.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import autocannon from 'autocannon';
import { Pool } from 'undici';
import { secretSourceFrom, startApiKeyCache } from '../../../pkg/auth/api-keys/secret-cache.ts';
import { ApiKeyService } from '../../../pkg/auth/api-keys/service.ts';
import { createClient } from '../../../pkg/kube/client/index.ts';
import { projectRoot, startControlPlane } from '../../../pkg/kube/controlplane/index.ts';
import { Scheme } from '../../../pkg/kube/kinds.ts';
import { rawRequest } from '../../../pkg/kube/raw.ts';
import { createLogger } from '../../../pkg/log/index.ts';
import { spawnBerth } from '../../support/process.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const AGENTS = Number(process.env.AGENTS ?? 1000);
const CONNECTIONS = 50;
// autocannon concatenates every response body into a string: with 1,000 agents the load generator,
// not the API, is the limit on one thread. Two worker threads by default.
const WORKERS = Number(process.env.BENCH_WORKERS ?? 2);
const ns = 'bench';
const log = (msg: string) => console.log(`[bench] ${msg}`);
const results: Record<string, number | string> = {};
const TICK_MS = 10; // USER_HZ is 100 on Linux

/** utime + stime of a process in ms, from /proc. */
function cpuMs(pid: number | undefined): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

/**
 * A lighter load generator than autocannon for the same measurement: 50 keep-alive connections of
 * one undici Pool, each looping request → discard body. autocannon keeps every body as a string and
 * is the first thing to run out of CPU on 2 shared cores; this shows what the API itself sustains.
 */
async function leanLoad(url: string, headers: Record<string, string>, connections: number, seconds: number) {
  const u = new URL(url);
  const pool = new Pool(u.origin, { connections, pipelining: 1 });
  const latencies: number[] = [];
  let errors = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < end) {
        const t = performance.now();
        try {
          const res = await pool.request({ path: u.pathname + u.search, method: 'GET', headers });
          await res.body.dump({ limit: Number.POSITIVE_INFINITY });
          if (res.statusCode !== 200) errors++;
        } catch {
          errors++;
        }
        latencies.push(performance.now() - t);
      }
    }),
  );
  await pool.close();
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => Math.round((latencies[Math.floor(latencies.length * p)] ?? 0) * 10) / 10;
  return { rps: Math.round(latencies.length / seconds), p50: pct(0.5), p99: pct(0.99), errors };
}

const cp = await startControlPlane({ crdDir: join(projectRoot(), 'crds') });
let apiOutput = () => '';
const stops: Array<() => Promise<unknown> | unknown> = [() => cp.stop()];
try {
  const admin = new KubeConfig();
  admin.loadFromFile(cp.kubeconfigPath);
  const kube = async (method: string, path: string, body?: unknown) => {
    const res = await rawRequest(admin, { method, path, body });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.body.slice(0, 200)}`);
  };
  await kube('POST', '/api/v1/namespaces', { metadata: { name: ns } });
  log(`creating ${AGENTS} agents`);
  const agentsPath = `/apis/berth.dev/v1alpha1/namespaces/${ns}/agents`;
  let next = 0;
  await Promise.all(
    Array.from({ length: 25 }, async () => {
      while (next < AGENTS) {
        const i = next++;
        await kube('POST', agentsPath, {
          apiVersion: 'berth.dev/v1alpha1',
          kind: 'Agent',
          metadata: { name: `agent-${String(i).padStart(4, '0')}`, labels: { bench: 'api' } },
          spec: {
            description: `benchmark agent ${i}`,
            prompt: 'You are a helpful assistant. Answer briefly.',
          },
        });
      }
    }),
  );

  // The key is made with the gateway identity, as POST /v1/api-keys would (bcrypt cost 10).
  const gw = new KubeConfig();
  gw.loadFromFile(cp.kubeconfigPath);
  gw.setCurrentContext('berth-local-gateway');
  const quiet = createLogger({ level: 'silent' });
  const secrets = await startApiKeyCache({ kc: gw, namespace: ns, logger: quiet });
  const keys = new ApiKeyService({
    client: createClient({ kc: gw, scheme: new Scheme() }),
    namespace: ns,
    source: secretSourceFrom(secrets, ns),
    logger: quiet,
  });
  const key = await keys.create({ name: 'bench' });
  await keys.stop();
  await secrets.stop();

  const kubeconfig = join(tmpdir(), `berth-bench-api-${process.pid}`);
  writeFileSync(kubeconfig, gw.exportConfig(), { mode: 0o600 });
  // The API's credentials: gone with the run (the other stops run first).
  stops.push(() => rmSync(kubeconfig, { force: true }));
  const api = spawnBerth(['api', '--port', '0', '--namespace', ns], {
    ...process.env,
    ...(process.env.BENCH_API_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_API_NODE_OPTIONS } : {}),
    KUBECONFIG: kubeconfig,
    AUTH_MODE: 'basic',
    LOG_LEVEL: 'info',
  });
  // SIGTERM first, so a profile asked for with NODE_OPTIONS=--cpu-prof gets written.
  stops.unshift(async () => {
    api.proc.kill('SIGTERM');
    const t = setTimeout(() => api.proc.kill('SIGKILL'), 5000);
    await api.exited;
    clearTimeout(t);
  });
  process.on('exit', () => api.proc.kill('SIGKILL'));
  apiOutput = () => api.output();
  const port = (JSON.parse(await api.waitForLine(/"msg":"api listening"/)) as { port: number }).port;
  const url = `http://127.0.0.1:${port}/v1/namespaces/${ns}/agents`;
  const authorization = `Basic ${Buffer.from(`${key.public_key}:${key.secret_key}`).toString('base64')}`;

  // Setup only: wait until the API's informer holds every agent (first call also pays the bcrypt).
  let body = '';
  for (;;) {
    const res = await fetch(url, { headers: { authorization } });
    body = await res.text();
    if (res.status !== 200) throw new Error(`GET agents: ${res.status} ${body.slice(0, 200)}`);
    if ((JSON.parse(body) as { count: number }).count >= AGENTS) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  results.agents = AGENTS;
  results['response bytes'] = Buffer.byteLength(body);

  const gzip = { authorization, 'accept-encoding': 'gzip' };
  log('warm-up 3 s');
  await autocannon({ url, connections: CONNECTIONS, duration: 3, headers: gzip });
  // gzip is what HTTP clients ask for (browsers, fetch/undici, requests, axios); identity for reference.
  for (const [label, headers] of [
    ['gzip', gzip],
    ['identity', { authorization }],
  ] as const) {
    results[`${label}: load average (1 min) before`] = loadavg()[0]?.toFixed(2) ?? '';
    log(`GET agents (${label}) x${CONNECTIONS} for ${SECONDS} s`);
    const cpu0 = cpuMs(api.proc.pid);
    const opts = {
      url,
      connections: CONNECTIONS,
      duration: SECONDS,
      headers,
      ...(WORKERS ? { workers: WORKERS } : {}),
    };
    const r = await autocannon(opts as Parameters<typeof autocannon>[0]);
    const cpu = cpuMs(api.proc.pid) - cpu0;
    const served = r.requests.average * SECONDS;
    // The API's own CPU per request: its capacity apart from the load generator sharing the cores.
    results[`${label}: API CPU per request (µs)`] = Math.round((cpu * 1000) / Math.max(1, served));
    results[`${label}: API CPU use (% of one core)`] = Math.round(cpu / (SECONDS * 10));
    results[`${label}: req/s (mean)`] = Math.round(r.requests.average);
    results[`${label}: latency p50 (ms)`] = r.latency.p50;
    results[`${label}: latency p99 (ms)`] = r.latency.p99;
    results[`${label}: errors + non-2xx`] = r.errors + r.non2xx;
    if (label === 'gzip') {
      results.target = 'req/s >= 3000 and p99 <= 20 ms';
      results.met = String(r.requests.average >= 3000 && r.latency.p99 <= 20 && r.errors + r.non2xx === 0);
    }
  }
  for (const [label, headers] of [
    ['gzip, lean client', gzip],
    ['identity, lean client', { authorization }],
  ] as const) {
    log(`GET agents (${label}) x${CONNECTIONS} for ${SECONDS} s`);
    const cpu0 = cpuMs(api.proc.pid);
    const r = await leanLoad(url, headers, CONNECTIONS, SECONDS);
    results[`${label}: API CPU use (% of one core)`] = Math.round(
      (cpuMs(api.proc.pid) - cpu0) / (SECONDS * 10),
    );
    results[`${label}: req/s`] = r.rps;
    results[`${label}: latency p50 (ms)`] = r.p50;
    results[`${label}: latency p99 (ms)`] = r.p99;
    results[`${label}: errors + non-2xx`] = r.errors;
    if (label === 'gzip, lean client')
      results['met with the lean client'] = String(r.rps >= 3000 && r.p99 <= 20 && r.errors === 0);
  }
  const gzRes = await fetch(url, { headers: gzip });
  results['gzip response bytes'] = Number(gzRes.headers.get('content-length') ?? 0);
  const width = Math.max(...Object.keys(results).map((k) => k.length));
  console.log(`\nAPI benchmark (${SECONDS} s phases; machine shared with other work)\n`);
  for (const [k, v] of Object.entries(results)) console.log(`${k.padEnd(width)}  ${v}`);
  writeFileSync(join(import.meta.dirname, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
} finally {
  for (const stop of stops) await stop();
  if (process.env.BENCH_API_OUTPUT) console.log(apiOutput());
}
