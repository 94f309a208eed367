/**
 * Berth as separate processes on the test control plane — `berth broker`, `berth controller` (with
 * the engine) and `berth api` — and what an operator's tools do with them: scrape /metrics, probe
 * /healthz and /readyz, send SIGTERM.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { API_VERSION, berthScheme, Kinds } from '../../pkg/api/index.ts';
import { applyObject } from '../../pkg/kube/apply.ts';
import { createClient } from '../../pkg/kube/client/index.ts';
import { kubeConfig } from '../support/kube.ts';
import { type Spawned, spawnBerth } from '../support/process.ts';
import { eventually } from '../support/wait.ts';

export interface Proc {
  url: string;
  spawned: Spawned;
  /** Sends `signal` (default SIGTERM) and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

const running: Spawned[] = [];

const dirs: string[] = [];

/** A temporary directory removed by `killAll` (kubeconfigs with test tokens, CA files). */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

/** SIGKILLs whatever a test left running and removes its temporary files (afterAll). */
export function killAll(): void {
  for (const p of running) if (p.proc.exitCode === null && p.proc.signalCode === null) p.proc.kill('SIGKILL');
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

function kubeconfigFile(user: 'gateway' | 'controller'): string {
  const file = join(tempDir(`berth-obs-${user}-`), 'kubeconfig');
  writeFileSync(file, kubeConfig(user).exportConfig(), { mode: 0o600 });
  return file;
}

async function launch(args: string[], env: NodeJS.ProcessEnv, ready: RegExp) {
  const spawned = spawnBerth(args, { ...process.env, LOG_LEVEL: 'info', ...env });
  running.push(spawned);
  const line = JSON.parse(await spawned.waitForLine(ready, 90_000)) as Record<string, unknown>;
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (spawned.proc.exitCode === null && spawned.proc.signalCode === null) spawned.proc.kill(signal);
    return spawned.exited;
  };
  return { spawned, line, stop };
}

export async function startBroker(env: NodeJS.ProcessEnv = {}): Promise<Proc> {
  const b = await launch(
    ['broker', '--port', '0'],
    { BROKER_HOST: '127.0.0.1', ...env },
    /"msg":"broker listening"/,
  );
  return { ...b, url: `http://127.0.0.1:${b.line.port}` };
}

export async function startApi(ns: string, brokerUrl: string, env: NodeJS.ProcessEnv = {}): Promise<Proc> {
  const a = await launch(
    ['api', '--port', '0', '--namespace', ns],
    { KUBECONFIG: kubeconfigFile('gateway'), BROKER_URL: brokerUrl, AUTH_MODE: 'open', ...env },
    /"msg":"api listening"/,
  );
  return { ...a, url: `http://127.0.0.1:${a.line.port}` };
}

export async function startController(
  ns: string,
  brokerUrl: string,
  env: NodeJS.ProcessEnv = {},
): Promise<Proc & { metricsPort: number; probesPort: number }> {
  const c = await launch(
    ['controller', '--namespace', ns, '--port', '0', '--metrics-port', '0', '--no-leader-elect'],
    { KUBECONFIG: kubeconfigFile('controller'), BROKER_URL: brokerUrl, POD_NAMESPACE: ns, ...env },
    /"msg":"ready"/,
  );
  const { probesPort, metricsPort } = c.line as { probesPort: number; metricsPort: number };
  return { ...c, url: `http://127.0.0.1:${probesPort}`, probesPort, metricsPort };
}

const obj = (kind: string, name: string, ns: string, spec: Record<string, unknown>): KubernetesObject =>
  ({ apiVersion: API_VERSION, kind, metadata: { name, namespace: ns }, spec }) as KubernetesObject;

/** Applies Berth objects as the admin (server-side apply). */
export async function apply(ns: string, objects: Array<[kind: string, name: string, spec: object]>) {
  const admin = createClient({ kc: kubeConfig('admin'), scheme: berthScheme() });
  for (const [kind, name, spec] of objects)
    await applyObject(admin, obj(kind, name, ns, spec as Record<string, unknown>), {
      fieldManager: 'observability-test',
      force: true,
    });
}

/**
 * Waits for the controller to resolve a Memory's address: a query run before that fails with
 * "no resolved address yet", so tests that chat right after starting the controller wait here.
 */
export async function memoryResolved(ns: string, name = 'default'): Promise<void> {
  const admin = createClient({ kc: kubeConfig('admin'), scheme: berthScheme() });
  await eventually(
    async () => {
      const m = await admin.get(Kinds.Memory, { namespace: ns, name });
      return !!m.status?.lastResolvedAddress;
    },
    30_000,
    50,
  );
}

/** Memory `default` on the broker and Model `demo` (the built-in demo model: no network, no key). */
export const demoSetup = (brokerUrl: string): Array<[string, string, object]> => [
  ['Memory', 'default', { address: { value: brokerUrl } }],
  ['Model', 'demo', { type: 'demo', model: 'berth-demo' }],
];

/** GET over HTTPS with the controller's self-signed metrics certificate. */
export function httpsGet(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
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

export async function scrape(url: string, headers: Record<string, string> = {}): Promise<string> {
  const res = await fetch(`${url}/metrics`, { headers });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET ${url}/metrics: HTTP ${res.status}: ${text}`);
  return text;
}

/** `# TYPE` of every family in an exposition. */
export function families(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) out.set(m[1] as string, m[2] as string);
  return out;
}

/** The sum of the samples of `name` whose labels include every `labels` pair. */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  let sum: number | undefined;
  for (const m of text.matchAll(/^(\S+?)(?:\{(.*)\})? (\S+)$/gm)) {
    if (m[1] !== name) continue;
    const l = m[2] ?? '';
    if (!Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`))) continue;
    sum = (sum ?? 0) + Number(m[3]);
  }
  return sum;
}

/** Prometheus naming conventions every Berth exposition must follow. */
export function conventionViolations(text: string): string[] {
  const bad: string[] = [];
  for (const [name, type] of families(text)) {
    if (type === 'counter' && !name.endsWith('_total')) bad.push(`counter ${name} lacks _total`);
    if (name.startsWith('berth_') && type === 'histogram' && !name.endsWith('_seconds'))
      bad.push(`histogram ${name} is not in seconds`);
    if (/_(ms|milliseconds|millis)(_|$)/.test(name)) bad.push(`${name} is not in base units`);
    if (/^berth_\w+_(process|nodejs)_/.test(name)) bad.push(`${name}: default metrics carry a prefix`);
  }
  return bad;
}
