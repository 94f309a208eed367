/**
 * The processes of a multi-tenant install (see tenants.ts for how a pod becomes a process): per
 * tenant its broker, API and dashboard; the base's broker in berth-system (the fallback of every
 * namespace without a broker of its own) and the cluster-wide controller; and a listener a tenant
 * points its own `berth-broker` Service at, recording the credentials sent to it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { MANIFESTS } from '../install/support.ts';
import {
  type Cluster,
  installTenant,
  type Obj,
  podOf,
  type Running,
  runPod,
  standIn,
  waitForRight,
} from './tenants.ts';

export const SYSTEM = 'berth-system';
const TOKEN_REVIEW = 'create tokenreviews.authentication.k8s.io';

export interface TenantStack {
  ns: string;
  broker: Running;
  api: Running;
  /** The dashboard's URL, its base path (`/<namespace>`) included. */
  dashboard: string;
}

/** A namespace's `berth-broker` Deployment as a process, its Service pointed at it. */
async function startBroker(cluster: Cluster, objs: Obj[], ns: string): Promise<Running> {
  const pod = podOf(objs, 'berth-broker');
  if (pod.namespace !== ns) throw new Error(`berth-broker rendered in ${pod.namespace}, not ${ns}`);
  await waitForRight(cluster, pod.serviceAccount, ns, TOKEN_REVIEW);
  const broker = await runPod(cluster, pod, /"msg":"broker listening"/);
  await cluster.pointService(ns, 'berth-broker', broker.port);
  return broker;
}

/** One tenant of overlays/tenant: its broker, its API reading that broker, its dashboard on that API. */
export async function startTenant(cluster: Cluster, objs: Obj[], ns: string): Promise<TenantStack> {
  const broker = await startBroker(cluster, objs, ns);
  const apiPod = podOf(objs, 'berth-api');
  // AUTH_MODE open (the rendered basic needs API keys): the API then acts as its own account, which
  // is what reaches the broker in every mode.
  const api = await runPod(cluster, apiPod, /"msg":"api listening"/, {
    ...standIn(apiPod, 'BROKER_URL', 'http://berth-broker', broker.url),
    AUTH_MODE: 'open',
  });
  const dashPod = podOf(objs, 'berth-dashboard');
  const dash = await runPod(cluster, dashPod, /"msg":"dashboard listening"/, {
    ...standIn(dashPod, 'API_SERVICE_URL', 'http://berth-api:8000', api.url),
    AUTH_MODE: 'open',
  });
  if (dashPod.env.BASE_PATH !== `/${ns}`) throw new Error(`dashboard BASE_PATH ${dashPod.env.BASE_PATH}`);
  return { ns, broker, api, dashboard: `${dash.url}${dashPod.env.BASE_PATH}` };
}

/** manifests/base's broker in berth-system: the broker of every namespace without its own. */
export function startSystemBroker(cluster: Cluster, base: Obj[]): Promise<Running> {
  return startBroker(cluster, base, SYSTEM);
}

/**
 * manifests/base's controller, watching every namespace: BROKER_URL is the base's broker (here its
 * local URL), tenant brokers' tokens minted for POD_NAMESPACE/POD_SERVICE_ACCOUNT as rendered.
 */
export async function startSystemController(
  cluster: Cluster,
  base: Obj[],
  broker: Running,
  caFile: string,
): Promise<Running & { tokenFile: string }> {
  const pod = podOf(base, 'berth-controller');
  await waitForRight(
    cluster,
    pod.serviceAccount,
    SYSTEM,
    `create serviceaccounts/${pod.serviceAccount} -n ${SYSTEM} --subresource=token`,
  );
  const running = await runPod(cluster, pod, /"msg":"ready"/, {
    ...standIn(pod, 'BROKER_URL', 'http://berth-broker', broker.url),
    HOSTNAME: 'controller-0',
    NODE_EXTRA_CA_CERTS: caFile,
  });
  return { ...running, tokenFile: running.env.BROKER_TOKEN_FILE as string };
}

export interface Capture {
  url: string;
  port: number;
  /** Every Authorization header received, with its path. */
  seen: Array<{ method: string; path: string; authorization?: string }>;
  close(): Promise<void>;
}

/**
 * A listener of the tenant's own: answers every request 200 with a body the memory contract's
 * calls accept (a conversation id, no messages), recording what it was sent.
 */
export async function startCapture(): Promise<Capture> {
  const seen: Capture['seen'] = [];
  const server: Server = createServer((req, res) => {
    seen.push({ method: req.method ?? '', path: req.url ?? '', authorization: req.headers.authorization });
    req.resume();
    req.on('end', () => {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end('{"conversation_id":"captured","messages":[],"total":0}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    seen,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export interface Install {
  system: Running;
  controller: Running & { tokenFile: string };
  tenants: Record<string, TenantStack>;
}

/**
 * manifests/base applied once (docs/install.md), each of `tenants` installed from the overlay and
 * started, `plain` namespaces created without a broker, `before` run (Services pointed, say), and
 * last the controller (trusting the model's CA in `caFile`).
 */
export async function startInstall(
  cluster: Cluster,
  scratch: string,
  caFile: string,
  o: { tenants: string[]; plain: string[]; before?: () => Promise<unknown> },
): Promise<Install> {
  const baseDir = join(MANIFESTS, 'base');
  await cluster.kubectl(['apply', '-k', baseDir]);
  const base = await cluster.render(baseDir);
  // A test control plane's bootstrap has a berth-controller ClusterRole of its own: the base's
  // rules must be what the controller runs with.
  const role = (x: Obj) => x.kind === 'ClusterRole' && x.metadata.name === 'berth-controller';
  const applied = JSON.parse(await cluster.kubectl(['get', 'clusterrole', 'berth-controller', '-o', 'json']));
  if (JSON.stringify(applied.rules) !== JSON.stringify(base.find(role)?.rules))
    throw new Error(`ClusterRole berth-controller is not the base's: ${JSON.stringify(applied.rules)}`);
  const rendered = await Promise.all(o.tenants.map((ns) => installTenant(cluster, scratch, ns)));
  await Promise.all(o.plain.map((ns) => cluster.kubectl(['create', 'namespace', ns])));
  const [system, ...stacks] = await Promise.all([
    startSystemBroker(cluster, base),
    ...o.tenants.map((ns, i) => startTenant(cluster, rendered[i] as Obj[], ns)),
  ]);
  await o.before?.();
  const controller = await startSystemController(cluster, base, system as Running, caFile);
  const tenants = Object.fromEntries((stacks as TenantStack[]).map((s) => [s.ns, s]));
  return { system: system as Running, controller, tenants };
}
