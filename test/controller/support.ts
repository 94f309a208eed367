/**
 * Helpers of the controller's integration tests: a real broker process (restartable on the same
 * port with its data kept on disk), broker data seeding/inspection, and condition waits.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { berthScheme } from '../../pkg/api/index.ts';
import { type Client, createClient } from '../../pkg/kube/client/index.ts';
import { rawRequest } from '../../pkg/kube/raw.ts';
import { type Spawned, spawnBerth } from '../support/process.ts';

export interface BrokerProcess {
  url: string;
  port: number;
  /** Stops the process (SIGKILL when `hard`), keeping its data directory. */
  stop(hard?: boolean): Promise<void>;
  /** Starts it again on the same port with the same data. */
  start(): Promise<void>;
  /** Stops it for good and removes its data directory. */
  remove(): Promise<void>;
}

/** `berth broker` as its own process, persisting to a temp dir so a restart keeps the data. */
export async function startBrokerProcess(): Promise<BrokerProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'berth-ctl-broker-'));
  let proc: Spawned | undefined;
  let port = 0;
  const launch = async () => {
    proc = spawnBerth(['broker', '--port', String(port)], {
      ...process.env,
      BROKER_PERSIST_DIR: dir,
      BROKER_PERSIST_FLUSH_MS: '20',
      LOG_LEVEL: 'info',
    });
    const line = await proc.waitForLine(/broker listening/, 30_000).catch((err: unknown) => {
      proc?.proc.kill('SIGKILL'); // never leave a broker behind when it did not come up
      throw err;
    });
    port = (JSON.parse(line) as { port: number }).port;
  };
  await launch();
  const b: BrokerProcess = {
    url: `http://127.0.0.1:${port}`,
    port,
    async stop(hard = false) {
      const p = proc;
      if (!p || p.proc.exitCode !== null) return;
      p.proc.kill(hard ? 'SIGKILL' : 'SIGTERM');
      await p.exited;
    },
    start: launch,
    async remove() {
      await b.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return b;
}

async function json(url: string, init?: RequestInit): Promise<unknown> {
  const res = await fetch(url, init);
  if (!res.ok) throw new Error(`${init?.method ?? 'GET'} ${url}: HTTP ${res.status} ${await res.text()}`);
  return res.json();
}

/** Stores one message and one event for `query` in the broker. */
export async function seedBrokerData(
  broker: string,
  query: string,
  namespace: string,
  conversation = `conv-${namespace}-${query}`,
): Promise<void> {
  const post = (path: string, body: unknown) =>
    json(`${broker}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  await post('/messages', {
    conversation_id: conversation,
    query_id: query,
    messages: [{ role: 'user', content: `hello from ${query}` }],
  });
  await post('/events', {
    timestamp: new Date().toISOString(),
    eventType: 'Normal',
    reason: 'QueryExecutionStart',
    message: `query ${query} started`,
    data: { queryId: query, queryName: query, queryNamespace: namespace, sessionId: query },
  });
}

/** Counts of the query's messages and events in the broker. */
export async function brokerCounts(
  broker: string,
  query: string,
): Promise<{ messages: number; events: number }> {
  const m = (await json(`${broker}/messages?query_id=${encodeURIComponent(query)}`)) as { total: number };
  const e = (await json(`${broker}/events/${encodeURIComponent(query)}`)) as { total: number };
  return { messages: m.total, events: e.total };
}

/** Polls `probe` (for state that has no watch: broker contents, process output) until it holds. */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 20_000,
  everyMs = 20,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** The typed client without a cache: every call goes to the API server. */
export const liveClient = (kc: KubeConfig): Client => createClient({ kc, scheme: berthScheme() });

/** Creates a namespaced Berth object as admin and returns it. */
export async function create<T extends KubernetesObject>(kc: KubeConfig, plural: string, obj: T): Promise<T> {
  const ns = obj.metadata?.namespace;
  const res = await rawRequest(kc, {
    method: 'POST',
    path: `/apis/berth.dev/v1alpha1/namespaces/${ns}/${plural}`,
    body: { apiVersion: 'berth.dev/v1alpha1', ...obj },
  });
  if (res.status >= 300) throw new Error(`create ${plural}: HTTP ${res.status} ${res.body}`);
  return res.json<T>();
}

export async function getObject<T = KubernetesObject>(kc: KubeConfig, path: string): Promise<T | undefined> {
  const res = await rawRequest(kc, { path });
  if (res.status === 404) return undefined;
  if (res.status >= 300) throw new Error(`GET ${path}: HTTP ${res.status} ${res.body}`);
  return res.json<T>();
}

export const queryPath = (ns: string, name: string) =>
  `/apis/berth.dev/v1alpha1/namespaces/${ns}/queries/${name}`;

export function queryObject(ns: string, name: string, extra: Record<string, unknown> = {}): KubernetesObject {
  return {
    kind: 'Query',
    metadata: { name, namespace: ns },
    spec: { input: `hello ${name}`, target: { type: 'model', name: 'default' }, ...extra },
  } as KubernetesObject;
}

/**
 * `berth controller` as its own process, leader-electing with short timings (a lease of `leaseMs`,
 * 2 s renew deadline, 250 ms retry) and no engine: the leader-kill tests' contender.
 */
export function spawnElectingController(o: {
  namespace: string;
  name: string;
  kubeconfig: string | undefined;
  brokerUrl: string;
  leaseMs: number;
}): Spawned {
  return spawnBerth(
    [
      'controller',
      '--namespace',
      o.namespace,
      '--port',
      '0',
      '--metrics-port',
      '0',
      '--no-engine',
      '--lease-duration',
      `${o.leaseMs}ms`,
      '--renew-deadline',
      '2s',
      '--retry-period',
      '250ms',
      '--purge-retry-max',
      '300ms',
    ],
    {
      ...process.env,
      KUBECONFIG: o.kubeconfig,
      BROKER_URL: o.brokerUrl,
      POD_NAMESPACE: o.namespace,
      LOG_LEVEL: 'info',
      HOSTNAME: o.name,
    },
  );
}
