/** Helpers of the controller benchmark: a `berth controller` process, metrics scraping, pools. */
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { rawRequest } from '../../../pkg/kube/raw.ts';
import { type Spawned, spawnBerth } from '../../support/process.ts';

export interface ControllerProc {
  proc: Spawned;
  pid: number;
  metricsPort: number;
  syncMs: number;
  /** Epoch ms at which the process logged that it became leader (its term's reconciles start then). */
  leaderAt: number;
  stop(): Promise<void>;
}

export async function startControllerProc(
  env: NodeJS.ProcessEnv,
  namespace: string,
): Promise<ControllerProc> {
  const proc = spawnBerth(
    ['controller', '--namespace', namespace, '--port', '0', '--metrics-port', '0', '--no-engine'],
    { ...env, LOG_LEVEL: 'info' },
  );
  const synced = JSON.parse(await proc.waitForLine(/"msg":"caches synced"/, 120_000)) as { syncMs: number };
  const ready = JSON.parse(await proc.waitForLine(/"msg":"ready"/, 60_000)) as { metricsPort: number };
  const leader = JSON.parse(await proc.waitForLine(/became leader/, 60_000)) as { time: string };
  return {
    proc,
    pid: proc.proc.pid as number,
    metricsPort: ready.metricsPort,
    syncMs: synced.syncMs,
    leaderAt: Date.parse(leader.time),
    async stop() {
      proc.proc.kill('SIGTERM');
      await proc.exited;
    },
  };
}

/** Resident set size of a process in MB (from /proc). */
export function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

export function scrape(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const r = request({ host: '127.0.0.1', port, path: '/metrics', rejectUnauthorized: false }, (res) => {
      let body = '';
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => resolve(body));
    });
    r.on('error', reject);
    r.end();
  });
}

/** Sum of a counter's samples whose labels match `labels` (substring match on the label set). */
export function counter(metrics: string, name: string, labels: string): number {
  let sum = 0;
  for (const line of metrics.split('\n')) {
    if (line.startsWith(`${name}{`) && line.includes(labels)) sum += Number(line.split(' ').pop());
  }
  return sum;
}

/** Runs `task` for 0..n-1 with at most `concurrency` at once. */
export async function pool(
  n: number,
  concurrency: number,
  task: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, n) }, async () => {
      while (next < n) await task(next++);
    }),
  );
}

export function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

export async function kube(kc: KubeConfig, method: string, path: string, body?: unknown): Promise<unknown> {
  for (let attempt = 0; ; attempt++) {
    const res = await rawRequest(kc, { method, path, body });
    if (res.status < 300) return res.body ? res.json() : undefined;
    // The API server sheds load with 429 under the bench's bursts; retry like a client would.
    if (res.status === 429 && attempt < 10) {
      await new Promise((r) => setTimeout(r, 100 * (attempt + 1)));
      continue;
    }
    throw new Error(`${method} ${path}: HTTP ${res.status} ${res.body.slice(0, 300)}`);
  }
}

export async function brokerGone(broker: string, query: string): Promise<boolean> {
  const [m, e] = await Promise.all([
    fetch(`${broker}/messages?query_id=${query}`).then((r) => r.json() as Promise<{ total: number }>),
    fetch(`${broker}/events/${query}`).then((r) => r.json() as Promise<{ total: number }>),
  ]);
  return m.total === 0 && e.total === 0;
}

export async function seed(broker: string, query: string, ns: string): Promise<void> {
  const post = async (path: string, body: unknown) => {
    const r = await fetch(`${broker}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!r.ok) throw new Error(`POST ${path}: HTTP ${r.status}`);
    await r.body?.cancel();
  };
  await post('/messages', {
    conversation_id: `c-${query}`,
    query_id: query,
    messages: [{ role: 'user', content: 'hi' }],
  });
  await post('/events', {
    timestamp: new Date().toISOString(),
    eventType: 'Normal',
    reason: 'QueryExecutionStart',
    message: 'start',
    data: { queryId: query, queryName: query, queryNamespace: ns, sessionId: query },
  });
}
