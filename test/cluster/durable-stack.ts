/**
 * The durable install as pods (issue 33 item 3): `manifests/overlays/durable-broker` (3 broker
 * replicas, the `berth-migrate` Job) applied as docs/install.md "Durable broker" says, on a
 * PostgreSQL and a Redis of the test's own — never the machine's shared ones — bound to the host's
 * node address (the control plane's `cp.address`) on free ports, so the pods reach them through the
 * node's bridge. Their credentials are random, go into the `berth-broker-storage` Secret, and only
 * the pods' network and the host may connect (pg_hba; Redis `requirepass`).
 *
 * Beside the overlay, all unchanged: the fake model as a pod (stack.ts), a Model, an Agent and the
 * Memory `default` (the broker's Service), and an API key of the `basic` mode the manifests run —
 * its Secret written as `POST /v1/api-keys` writes it (bcrypt hash only), since basic mode has no
 * other way to get a first key from outside the cluster.
 */
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import bcrypt from 'bcryptjs';
import pg from 'pg';
import { generateKeyPair, newApiKeySecret } from '../../pkg/auth/api-keys/format.ts';
import { type GuardedChild, startGuarded } from '../../pkg/kube/controlplane/child.ts';
import { projectRoot } from '../../pkg/kube/controlplane/index.ts';
import { freePort } from '../../pkg/kube/controlplane/ports.ts';
import { eventually } from '../support/wait.ts';
import { pidsNaming, rssOf } from './host-check.ts';
import { fakeModelObjects, helperAgentObjects, type Stack, startStack } from './stack.ts';

const run = promisify(execFile);
const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';
export const NS = 'berth-system';
export const BERTH_DEPLOYMENTS = ['berth-api', 'berth-broker', 'berth-controller', 'berth-dashboard'];

const secret = () => randomBytes(18).toString('base64url');

/** A PostgreSQL and a Redis of this test's own on `address`, reachable from `podCidr`. */
export interface OwnStores {
  databaseUrl: string;
  redisUrl: string;
  /** SQL as the superuser over the server's Unix socket (the broker's database). */
  query<T extends pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<T[]>;
  stop(): Promise<void>;
}

export async function startOwnStores(address: string, podCidr: string): Promise<OwnStores> {
  const dir = mkdtempSync(join(tmpdir(), 'berth-cluster-stores-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim());
    const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
    chownSync(dir, uid, gid);
  }
  // initdb refuses root: as root, PostgreSQL's tools run as `postgres` (toolchain.md).
  const asPostgres = (cmd: string): [string, string[]] =>
    asRoot ? ['su', ['postgres', '-c', cmd]] : ['sh', ['-c', cmd]];
  const pgRun = (cmd: string) => run(...asPostgres(cmd), { timeout: 60_000 });
  const [pgPort, redisPort] = [await freePort(), await freePort()];
  const data = join(dir, 'pg');
  const pgStop = `${PG_BIN}/pg_ctl -D ${data} -m fast -w stop`;
  const pgPassword = secret();
  const redisPassword = secret();
  // pg_ctl detaches PostgreSQL: should this process die without stop(), a reaper stops it (and
  // removes the directory) once our pid is gone. Redis runs behind the control plane's guard.
  const [reapBin, reapArgs] = asPostgres(pgStop);
  const reaper = spawn(
    'sh',
    [
      '-c',
      'parent=$1; shift; while kill -0 "$parent" 2>/dev/null; do sleep 1; done; "$@"; rm -rf "$DIR"',
      'berth-stores-reaper',
      String(process.pid),
      reapBin,
      ...reapArgs,
    ],
    { detached: true, stdio: 'ignore', env: { ...process.env, DIR: dir } },
  );
  reaper.unref();
  let redis: GuardedChild | undefined;
  let pgStarted = false;
  const stopAll = async () => {
    await redis?.stop();
    if (pgStarted) await pgRun(pgStop).catch(() => {});
    if (reaper.pid) process.kill(reaper.pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await pgRun(`${PG_BIN}/initdb -D ${data} -U postgres -A trust --no-sync`);
    // Trust stays on the Unix socket (this test's admin connection); TCP needs the password, and only
    // the pods' network and the host itself may try.
    writeFileSync(
      join(data, 'pg_hba.conf'),
      'local all all trust\n' +
        `host all all ${podCidr} scram-sha-256\n` +
        `host all all ${address}/32 scram-sha-256\n`,
    );
    const opts = `-p ${pgPort} -k ${dir} -c listen_addresses=${address} -c fsync=off -c max_connections=200`;
    await pgRun(`${PG_BIN}/pg_ctl -D ${data} -l ${dir}/pg.log -o "${opts}" -w start`);
    pgStarted = true;
    await withAdmin(dir, pgPort, 'postgres', async (c) => {
      await c.query(`CREATE ROLE berth LOGIN PASSWORD '${pgPassword}'`);
      await c.query('CREATE DATABASE berth OWNER berth');
    });

    const redisLog = join(dir, 'redis.log');
    // The password on the command line is this test's own throwaway one.
    const args = ['--port', String(redisPort), '--bind', address, '--save', '', '--appendonly', 'no'];
    redis = startGuarded(
      'redis',
      'redis-server',
      [...args, '--requirepass', redisPassword, '--dir', dir],
      redisLog,
    );
    const started = redis;
    await eventually(
      () => {
        if (started.proc.exitCode !== null)
          throw new Error(`redis-server exited:\n${readFileSync(redisLog, 'utf8')}`);
        return existsSync(redisLog) && readFileSync(redisLog, 'utf8').includes('Ready to accept connections');
      },
      15_000,
      50,
    );
  } catch (err) {
    await stopAll();
    throw err;
  }
  return {
    databaseUrl: `postgres://berth:${pgPassword}@${address}:${pgPort}/berth`,
    redisUrl: `redis://default:${redisPassword}@${address}:${redisPort}`,
    query: (sql, params) => withAdmin(dir, pgPort, 'berth', async (c) => (await c.query(sql, params)).rows),
    stop: stopAll,
  };
}

async function withAdmin<T>(socketDir: string, port: number, db: string, fn: (c: pg.Client) => Promise<T>) {
  const c = new pg.Client({ host: socketDir, port, user: 'postgres', database: db });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

export interface DurableInstall {
  stack: Stack;
  stores: OwnStores;
  /** `http://<cluster IP>` of Service `berth-broker` (port 80), reached through kube-proxy. */
  brokerUrl: string;
  /** `http://<cluster IP>:8000` of Service `berth-api`. */
  apiUrl: string;
  /** An API key in bearer form (`pk-svc-…:sk-svc-…`), for the OpenAI SDK and `/v1`. */
  apiKey: string;
  /** A broker token of the controller's account (a writer: BROKER_WRITER_SUBJECTS). */
  writerToken: string;
  /** Seconds each phase of the install took. */
  timings: Record<string, number>;
  /** Highest RSS so far of the node's processes (components, shims, containers) and of the control plane. */
  peak(): {
    nodeRss: number;
    /** The same processes' proportional set size: shared pages (one image's Node binary in every container) counted once. */
    nodePss: number;
    controlPlaneRss: number;
    podsCgroup: number;
    atPeak: Record<string, number>;
  };
  stop(): Promise<void>;
}

/** A control plane, a node, own stores and the durable overlay installed and Ready. */
export async function installDurable(log: (m: string) => void = () => {}): Promise<DurableInstall> {
  const t0 = Date.now();
  const timings: Record<string, number> = {};
  const mark = (k: string, since: number) => {
    timings[k] = Math.round((Date.now() - since) / 100) / 10;
    return Date.now();
  };
  const stack = await startStack(log);
  let t = mark('stack', t0);
  let nodeRss = 0;
  let cpRss = 0;
  let nodePss = 0;
  let atPeak: Record<string, number> = {};
  const sample = () => {
    const pids = stack.node.pids();
    const rss = rssOf(pids);
    nodePss = Math.max(nodePss, pssOf(pids));
    if (rss > nodeRss) {
      nodeRss = rss;
      atPeak = breakdown(pids);
    }
    cpRss = Math.max(cpRss, rssOf(pidsNaming(stack.cp.stateDir)));
  };
  const sampler = setInterval(sample, 1000);
  let stores: OwnStores | undefined;
  try {
    stores = await startOwnStores(stack.cp.address, stack.node.clusterCidr);
    t = mark('stores', t);
    const c = stack.cluster;
    await c.kubectl(['create', 'namespace', NS]);
    // docs/install.md "Durable broker", as written there.
    await c.kubectl([
      '-n',
      NS,
      'create',
      'secret',
      'generic',
      'berth-broker-storage',
      `--from-literal=DATABASE_URL=${stores.databaseUrl}`,
      `--from-literal=REDIS_URL=${stores.redisUrl}`,
    ]);
    await c.kubectl(['apply', '-k', stack.kustomization('durable', 'overlays/durable-broker')]);
    const script = readFileSync(join(projectRoot(), 'test', 'cluster', 'fake-model.mjs'), 'utf8');
    const { publicKey, secretKey } = generateKeyPair();
    await c.apply(
      ...fakeModelObjects(NS, script),
      newApiKeySecret({
        namespace: NS,
        name: 'cluster-suite',
        publicKey,
        secretHash: bcrypt.hashSync(secretKey, 4),
        createdAt: new Date().toISOString(),
        expiresAt: null,
      }),
      ...helperAgentObjects(NS),
    );
    await c.wait(NS, 'job/berth-migrate', 'condition=Complete', '300s');
    t = mark('migrate', t);
    await c.kubectl(['wait', '--for=condition=Available', 'deployment', '--all', '-n', NS, '--timeout=300s']);
    for (const d of BERTH_DEPLOYMENTS) await c.kubectl(['rollout', 'status', `deployment/${d}`, '-n', NS]);
    await c.wait(NS, 'memory/default', 'jsonpath={.status.phase}=ready');
    t = mark('ready', t);
    const ip = async (name: string) =>
      (await c.getJson<{ spec: { clusterIP: string } }>(NS, `service/${name}`)).spec.clusterIP;
    const writerToken = await c.token('berth-controller', NS, 'berth-broker');
    const install: DurableInstall = {
      stack,
      stores,
      brokerUrl: `http://${await ip('berth-broker')}`,
      apiUrl: `http://${await ip('berth-api')}:8000`,
      apiKey: `${publicKey}:${secretKey}`,
      writerToken,
      timings,
      peak() {
        sample();
        return { nodeRss, nodePss, controlPlaneRss: cpRss, podsCgroup: stack.node.podsPeakMemory(), atPeak };
      },
      async stop() {
        clearInterval(sampler);
        await stack.stop();
        await stores?.stop();
      },
    };
    timings.install = Math.round((Date.now() - t0) / 100) / 10;
    return install;
  } catch (err) {
    clearInterval(sampler);
    await stack.stop();
    await stores?.stop();
    throw err;
  }
}

/** Sum of Pss (smaps_rollup) of `pids`, bytes. */
function pssOf(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
      total += Number(m?.[1] ?? 0) * 1024;
    } catch {}
  }
  return total;
}

/** RSS by command name (MiB), e.g. `node` for the Berth containers, `kubelet`, `containerd-shim…`. */
function breakdown(pids: number[]): Record<string, number> {
  const by: Record<string, number> = {};
  for (const pid of pids) {
    try {
      const comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
      by[comm] = (by[comm] ?? 0) + rssOf([pid]);
    } catch {}
  }
  return Object.fromEntries(
    Object.entries(by)
      .map(([k, v]) => [k, Math.round(v / 2 ** 20)] as const)
      .sort((a, b) => b[1] - a[1]),
  );
}

// ---- pods, logs and exits -------------------------------------------------------------------------

export interface PodInfo {
  name: string;
  ip: string;
  ready: boolean;
  deleting: boolean;
}

export async function podsOf(install: DurableInstall, app: string): Promise<PodInfo[]> {
  const list = JSON.parse(
    await install.stack.cluster.kubectl([
      'get',
      'pods',
      '-n',
      NS,
      '-l',
      `app.kubernetes.io/name=${app}`,
      '-o',
      'json',
    ]),
  ) as {
    items: Array<{
      metadata: { name: string; deletionTimestamp?: string };
      status: { podIP?: string; containerStatuses?: Array<{ ready: boolean }> };
    }>;
  };
  return list.items.map((p) => ({
    name: p.metadata.name,
    ip: p.status.podIP ?? '',
    ready: (p.status.containerStatuses ?? []).every((s) => s.ready) && !!p.status.containerStatuses?.length,
    deleting: !!p.metadata.deletionTimestamp,
  }));
}

/**
 * How every container of the namespace ended, from a `kubectl get pods --watch` kept open: pod name →
 * exit code and reason of its (first) container, as the kubelet reported them before the pod went.
 */
export function watchExits(install: DurableInstall): {
  exits: Map<string, { code: number; reason: string; at: number }>;
  stop(): void;
} {
  const exits = new Map<string, { code: number; reason: string; at: number }>();
  const tpl =
    '{.metadata.name}{" "}{.status.containerStatuses[0].state.terminated.exitCode}{" "}' +
    '{.status.containerStatuses[0].state.terminated.reason}{"\\n"}';
  const { cp } = install.stack;
  const child = spawn(
    cp.binaries.kubectl,
    ['--kubeconfig', cp.kubeconfigPath, 'get', 'pods', '-n', NS, '--watch', '-o', `jsonpath=${tpl}`],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  let rest = '';
  child.stdout?.on('data', (d: Buffer) => {
    const lines = (rest + d.toString()).split('\n');
    rest = lines.pop() ?? '';
    for (const l of lines) {
      const [name, code, reason] = l.trim().split(' ');
      if (name && code && !exits.has(name))
        exits.set(name, { code: Number(code), reason: reason ?? '', at: Date.now() });
    }
  });
  return { exits, stop: () => void child.kill('SIGTERM') };
}

/**
 * Service `name` (port 80, no selector) whose one endpoint is `address:port` on the host: how pods
 * reach a process of the test's own by a cluster name. (The engine never calls a reserved address
 * itself — this host's is in 192.0.2.0/24 — but a Service's cluster IP is an ordinary one.)
 */
export function hostService(name: string, address: string, port: number): object[] {
  return [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: NS },
      spec: { ports: [{ name: 'http', port: 80, targetPort: port }] },
    },
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name, namespace: NS, labels: { 'kubernetes.io/service-name': name } },
      addressType: 'IPv4',
      endpoints: [{ addresses: [address], conditions: { ready: true } }],
      ports: [{ name: 'http', port, protocol: 'TCP' }],
    },
  ];
}

// ---- a Memory of the test's own in front of the broker -------------------------------------------

export interface PurgeRecorder {
  /** `http://<cp.address>:<port>`. */
  url: string;
  port: number;
  /** Per Query: purge requests received, and those the broker ran (answered 2xx, not replayed). */
  purges: Map<string, { requests: number; executed: number; replayed: number; keys: Set<string> }>;
  /** Delay added before a purge's answer goes back (the broker has run it by then). */
  answerDelayMs: number;
  close(): Promise<void>;
}

/**
 * A Memory backend for a test: a proxy on the host (reachable from the pods at `address`) that
 * forwards every call to the broker's Service with the controller's broker token (a Memory at an
 * address that is not the broker's never gets the controller's token: docs/security.md) and counts
 * the Query message purges — the requests, and the broker's answers: `Idempotent-Replayed: true`
 * marks a repeat the broker answered from its key without running it.
 */
export async function startPurgeRecorder(
  address: string,
  brokerUrl: string,
  token: () => string,
): Promise<PurgeRecorder> {
  const target = new URL(brokerUrl);
  const purges: PurgeRecorder['purges'] = new Map();
  const rec: PurgeRecorder = { url: '', port: 0, purges, answerDelayMs: 0, close: async () => {} };
  const server: Server = createServer((req: IncomingMessage, res) => {
    const path = req.url ?? '/';
    const m = /^\/(?:conversations\/[^/]+\/)?queries\/([^/?]+)\/messages(?:\?.*)?$/.exec(path);
    const purge = req.method === 'DELETE' && m ? decodeURIComponent(m[1] as string) : undefined;
    const entry = purge
      ? (purges.get(purge) ??
        (purges
          .set(purge, { requests: 0, executed: 0, replayed: 0, keys: new Set() })
          .get(purge) as NonNullable<ReturnType<typeof purges.get>>))
      : undefined;
    if (entry) {
      entry.requests++;
      entry.keys.add(String(req.headers['idempotency-key'] ?? ''));
    }
    const headers = { ...req.headers, host: target.host, authorization: `Bearer ${token()}` };
    const up = request(
      { host: target.hostname, port: target.port || 80, path, method: req.method, headers },
      (upRes) => {
        if (entry && (upRes.statusCode ?? 500) < 300) {
          if (upRes.headers['idempotent-replayed'] === 'true') entry.replayed++;
          else entry.executed++;
        }
        const send = () => {
          res.writeHead(upRes.statusCode ?? 502, upRes.headers);
          upRes.pipe(res);
        };
        if (entry && rec.answerDelayMs > 0) setTimeout(send, rec.answerDelayMs);
        else send();
      },
    );
    up.on('error', () => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    req.pipe(up);
  });
  await new Promise<void>((ok) => server.listen(0, address, ok));
  rec.port = (server.address() as { port: number }).port;
  rec.url = `http://${address}:${rec.port}`;
  rec.close = () =>
    new Promise<void>((ok) => {
      server.closeAllConnections();
      server.close(() => ok());
    });
  return rec;
}
