/**
 * API latency under hostile requests: `node test/bench/api/hostile-paths.ts` (BENCH_SECONDS per
 * phase, default 10; HOSTILE_LOG_LEVELS, default `info,trace`; HOSTILE_BENCH_LABEL names the run in
 * hostile-results.json so before/after sit side by side).
 *
 * Boots a local control plane with 50 agents and runs `berth api` (basic mode) as its own process,
 * its log written to a file as a deployment's would be. For each log level: the cost of one hostile
 * request of each kind on an idle API (median of 10), then authenticated `GET …/agents` on 5
 * keep-alive connections alone, then again while 20 concurrent clients send hostile requests —
 * 14 KB paths, `Impersonate-*` headers (a 12 KB header name too), long token-like credentials,
 * 1 MB bodies of token text. The figures: p50/p99/max of the normal requests in each phase.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { Pool } from 'undici';
import { secretSourceFrom, startApiKeyCache } from '../../../pkg/auth/api-keys/secret-cache.ts';
import { ApiKeyService } from '../../../pkg/auth/api-keys/service.ts';
import { createClient } from '../../../pkg/kube/client/index.ts';
import { projectRoot, startControlPlane } from '../../../pkg/kube/controlplane/index.ts';
import { Scheme } from '../../../pkg/kube/kinds.ts';
import { rawRequest } from '../../../pkg/kube/raw.ts';
import { createLogger } from '../../../pkg/log/index.ts';
import { pct } from '../support.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const LEVELS = (process.env.HOSTILE_LOG_LEVELS ?? 'info,trace').split(',');
const NORMAL_CONNECTIONS = 5;
const HOSTILE_CLIENTS = 20;
const AGENTS = 50;
const ns = 'bench-hostile';
const log = (msg: string) => console.log(`[bench] ${msg}`);
const results: Record<string, number | string> = {};

const repeatTo = (unit: string, chars: number) => unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars);
const round = (ms: number) => Math.round(ms * 10) / 10;

interface Hostile {
  name: string;
  method?: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

function hostileKinds(authorization: string): Hostile[] {
  const agents = `/v1/namespaces/${ns}/agents`;
  const tokenText = repeatTo(`sk-proj-${'a-'.repeat(20)} Bearer eyJ${'a.'.repeat(30)} password=`, 1_000_000);
  return [
    {
      name: '14 KB path of "a-" + Impersonate-User, no credentials',
      path: `/v1/${repeatTo('a-', 14_000)}`,
      headers: { 'impersonate-user': 'system:admin' },
    },
    {
      name: '14 KB JWT-like path + Impersonate-Group, no credentials',
      path: `/v1/eyJ${repeatTo('a.', 14_000)}`,
      headers: { 'impersonate-group': 'system:masters' },
    },
    {
      name: 'Impersonate-Extra header with a 12 KB name',
      path: agents,
      headers: { [`impersonate-extra-${repeatTo('a-', 12_000)}`]: 'x' },
    },
    {
      name: 'Bearer with a 12 KB token-like value',
      path: agents,
      headers: { authorization: `Bearer eyJ${repeatTo('a.', 12_000)}` },
    },
    { name: 'X-API-Key of 12 KB "sk-"', path: agents, headers: { 'x-api-key': repeatTo('sk-', 12_000) } },
    {
      name: 'authenticated 14 KB path of "x://user:" (404)',
      path: `/v1/${repeatTo('x://user:', 14_000)}`,
      headers: { authorization },
    },
    {
      name: '1 MB of token text as a JSON body (authenticated POST, 400)',
      method: 'POST',
      path: agents,
      headers: { authorization, 'content-type': 'application/json' },
      body: Buffer.from(tokenText),
    },
    {
      name: '1 MB chat completion of token text (authenticated)',
      method: 'POST',
      path: '/compat/v1/chat/completions',
      headers: { authorization, 'content-type': 'application/json' },
      body: Buffer.from(
        JSON.stringify({
          model: `agent/${tokenText.slice(0, 200)}`,
          messages: [{ role: 'user', content: tokenText }],
        }),
      ),
    },
  ];
}

async function send(pool: Pool, h: Hostile): Promise<number> {
  const res = await pool.request({
    method: h.method ?? 'GET',
    path: h.path,
    headers: h.headers,
    body: h.body,
  });
  await res.body.dump({ limit: Number.POSITIVE_INFINITY });
  return res.statusCode;
}

/** Loops `GET agents` on `connections` connections until `until`; latencies in ms. */
async function normalLoad(origin: string, headers: Record<string, string>, until: number) {
  const pool = new Pool(origin, { connections: NORMAL_CONNECTIONS, pipelining: 1 });
  const latencies: number[] = [];
  let errors = 0;
  await Promise.all(
    Array.from({ length: NORMAL_CONNECTIONS }, async () => {
      while (performance.now() < until) {
        const t = performance.now();
        try {
          const res = await pool.request({ method: 'GET', path: `/v1/namespaces/${ns}/agents`, headers });
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
  return { latencies: latencies.sort((a, b) => a - b), errors };
}

/** 20 clients, each on its own connection, cycling through the hostile kinds until `until`. */
async function hostileLoad(origin: string, kinds: Hostile[], until: number) {
  const statuses: Record<string, number> = {};
  const latencies: number[] = [];
  await Promise.all(
    Array.from({ length: HOSTILE_CLIENTS }, async (_, client) => {
      const pool = new Pool(origin, { connections: 1, pipelining: 1 });
      for (let i = client; performance.now() < until; i++) {
        const t = performance.now();
        let status: string;
        try {
          status = String(await send(pool, kinds[i % kinds.length] as Hostile));
        } catch (err) {
          status = (err as { code?: string }).code ?? 'error';
        }
        latencies.push(performance.now() - t);
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
      await pool.close();
    }),
  );
  return { statuses, latencies: latencies.sort((a, b) => a - b) };
}

function cpuMs(pid: number | undefined): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** `berth api` at `level`, its log in a file; resolves once it listens. */
async function startApi(kubeconfig: string, level: string) {
  const logFile = join(tmpdir(), `berth-bench-hostile-${process.pid}-${level}.log`);
  const fd = openSync(logFile, 'w');
  const proc: ChildProcess = spawn(
    process.execPath,
    [join(projectRoot(), 'cmd', 'berth.ts'), 'api', '--port', '0', '--namespace', ns],
    {
      cwd: projectRoot(),
      env: { ...process.env, KUBECONFIG: kubeconfig, AUTH_MODE: 'basic', LOG_LEVEL: level },
      stdio: ['ignore', fd, fd],
    },
  );
  const exited = new Promise((r) => proc.once('exit', r));
  const deadline = Date.now() + 60_000;
  for (;;) {
    const line = readFileSync(logFile, 'utf8')
      .split('\n')
      .find((l) => l.includes('"msg":"api listening"'));
    if (line) {
      const port = (JSON.parse(line) as { port: number }).port;
      const stop = async () => {
        proc.kill('SIGTERM');
        await exited;
        rmSync(logFile, { force: true });
      };
      return {
        origin: `http://127.0.0.1:${port}`,
        pid: proc.pid,
        logBytes: () => statSync(logFile).size,
        stop,
      };
    }
    if (Date.now() > deadline || proc.exitCode !== null)
      throw new Error(`berth api did not start:\n${readFileSync(logFile, 'utf8').slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const cp = await startControlPlane({ crdDir: join(projectRoot(), 'crds') });
const stops: Array<() => Promise<unknown> | unknown> = [() => cp.stop()];
try {
  const admin = new KubeConfig();
  admin.loadFromFile(cp.kubeconfigPath);
  const kube = async (method: string, path: string, body?: unknown) => {
    const res = await rawRequest(admin, { method, path, body });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.body.slice(0, 200)}`);
  };
  await kube('POST', '/api/v1/namespaces', { metadata: { name: ns } });
  for (let i = 0; i < AGENTS; i++)
    await kube('POST', `/apis/berth.dev/v1alpha1/namespaces/${ns}/agents`, {
      apiVersion: 'berth.dev/v1alpha1',
      kind: 'Agent',
      metadata: { name: `agent-${i}` },
      spec: { description: `benchmark agent ${i}`, prompt: 'You are a helpful assistant.' },
    });
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
  const kubeconfig = join(tmpdir(), `berth-bench-hostile-${process.pid}`);
  writeFileSync(kubeconfig, gw.exportConfig(), { mode: 0o600 });
  stops.push(() => rmSync(kubeconfig, { force: true }));
  const authorization = `Basic ${Buffer.from(`${key.public_key}:${key.secret_key}`).toString('base64')}`;
  const kinds = hostileKinds(authorization);

  for (const level of LEVELS) {
    const api = await startApi(kubeconfig, level);
    try {
      // Setup: the informer holds every agent and the key is verified once (bcrypt) before timing.
      for (;;) {
        const res = await fetch(`${api.origin}/v1/namespaces/${ns}/agents`, { headers: { authorization } });
        const body = (await res.json()) as { count?: number };
        if (res.status === 200 && (body.count ?? 0) >= AGENTS) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      const one = new Pool(api.origin, { connections: 1 });
      for (const h of kinds) {
        const times: number[] = [];
        let status = 0;
        for (let i = 0; i < 10; i++) {
          const t = performance.now();
          status = await send(one, h);
          times.push(performance.now() - t);
        }
        times.sort((a, b) => a - b);
        results[`${level}: one request, ${h.name}: ms (status ${status})`] = round(pct(times, 50));
      }
      await one.close();

      log(`${level}: normal load alone, ${SECONDS} s`);
      const alone = await normalLoad(api.origin, { authorization }, performance.now() + SECONDS * 1000);
      log(`${level}: normal load with ${HOSTILE_CLIENTS} hostile clients, ${SECONDS} s`);
      const cpu0 = cpuMs(api.pid);
      const log0 = api.logBytes();
      const until = performance.now() + SECONDS * 1000;
      const [loaded, hostile] = await Promise.all([
        normalLoad(api.origin, { authorization }, until),
        hostileLoad(api.origin, kinds, until),
      ]);
      const apiCpu = cpuMs(api.pid) - cpu0;
      for (const [phase, r] of [
        ['alone', alone],
        ['under hostile load', loaded],
      ] as const) {
        results[`${level}: normal GET ${phase}: req/s`] = Math.round(r.latencies.length / SECONDS);
        results[`${level}: normal GET ${phase}: p50 (ms)`] = round(pct(r.latencies, 50));
        results[`${level}: normal GET ${phase}: p99 (ms)`] = round(pct(r.latencies, 99));
        results[`${level}: normal GET ${phase}: max (ms)`] = round(r.latencies.at(-1) ?? Number.NaN);
        results[`${level}: normal GET ${phase}: errors`] = r.errors;
      }
      results[`${level}: hostile requests answered`] = hostile.latencies.length;
      results[`${level}: hostile p99 (ms)`] = round(pct(hostile.latencies, 99));
      results[`${level}: hostile statuses`] = JSON.stringify(hostile.statuses);
      results[`${level}: API CPU under hostile load (% of one core)`] = Math.round(apiCpu / (SECONDS * 10));
      results[`${level}: API log bytes per hostile request`] = Math.round(
        (api.logBytes() - log0) / Math.max(1, hostile.latencies.length),
      );
    } finally {
      await api.stop();
    }
  }
  const width = Math.max(...Object.keys(results).map((k) => k.length));
  console.log(`\nAPI under hostile requests (${SECONDS} s phases; machine shared with other work)\n`);
  for (const [k, v] of Object.entries(results)) console.log(`${k.padEnd(width)}  ${v}`);
  const file = join(import.meta.dirname, 'hostile-results.json');
  const all = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
  all[process.env.HOSTILE_BENCH_LABEL ?? 'latest'] = { at: new Date().toISOString(), results };
  writeFileSync(file, `${JSON.stringify(all, null, 2)}\n`);
} finally {
  for (const stop of stops) await stop();
}
