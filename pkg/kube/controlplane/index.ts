import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureKubeBinaries, type KubeBinaries } from './binaries.ts';
import { bootstrapCluster } from './bootstrap.ts';
import { type GuardedChild, startGuarded } from './child.ts';
import { httpsGet, waitFor } from './https-probe.ts';
import { LOCAL_USERS, type LocalUser, writeKubeconfig } from './kubeconfig.ts';
import { ensurePki, issueCert, type Pki } from './pki.ts';
import { freePort } from './ports.ts';

export { ensureKubeBinaries, projectRoot } from './binaries.ts';
export type { LocalUser } from './kubeconfig.ts';
export type { Pki } from './pki.ts';

export interface ControlPlaneOptions {
  /** Keeps etcd data, PKI and kubeconfig here across runs; a temp dir (removed on stop) when absent. */
  stateDir?: string;
  /** CRD manifests to apply once the API server is ready. */
  crdDir?: string;
  binaries?: KubeBinaries;
  log?: (msg: string) => void;
  /**
   * Serve a node's pods (see node.ts): the API server binds `address` (a non-loopback address of
   * this host; the first one when absent) so pods reach it through the `kubernetes` Service, whose
   * endpoint the lease reconciler keeps at that address; the ServiceAccount admission plugin mounts
   * tokens; Node+RBAC authorization; a client certificate for the kubelets. Off by default.
   */
  node?: { address?: string; serviceCidr?: string };
}

export const DEFAULT_SERVICE_CIDR = '10.0.0.0/24';

export interface ControlPlane {
  server: string;
  kubeconfigPath: string;
  tokens: Record<LocalUser, string>;
  caCert: Buffer;
  binaries: KubeBinaries;
  stateDir: string;
  startMs: number;
  /** The CA, serving and service-account key files (the node's components sign and verify with them). */
  pki: Pki;
  /** Where the API server listens: 127.0.0.1, or the node address with `node`. */
  address: string;
  serviceCidr: string;
  /** Whether it was started with `node` (pods can reach it). */
  servesPods: boolean;
  stop(): Promise<void>;
}

function hostAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return undefined;
}

function advertiseAddress(): string {
  return hostAddress() ?? '10.255.255.1';
}

async function loadTokens(dir: string): Promise<Record<LocalUser, string>> {
  const file = join(dir, 'tokens.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8'));
  const tokens = Object.fromEntries(LOCAL_USERS.map((u) => [u, randomBytes(24).toString('hex')])) as Record<
    LocalUser,
    string
  >;
  await writeFile(file, JSON.stringify(tokens), { mode: 0o600 });
  return tokens;
}

function tokenCsv(tokens: Record<LocalUser, string>): string {
  const groups: Record<LocalUser, string> = {
    admin: 'system:masters',
    gateway: 'berth:gateways',
    controller: 'berth:controllers',
  };
  return LOCAL_USERS.map((u) => `${tokens[u]},${u},${u},"${groups[u]}"`).join('\n') + '\n';
}

/**
 * Starts etcd and kube-apiserver on free loopback ports with a generated PKI and token users
 * admin/gateway/controller, writes a kubeconfig, waits for /readyz, binds RBAC and applies CRDs.
 */
export async function startControlPlane(opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const t0 = Date.now();
  const log = opts.log ?? (() => {});
  const ephemeral = !opts.stateDir;
  const stateDir = opts.stateDir ?? (await mkdtemp(join(tmpdir(), 'berth-cp-')));
  const dirs = { pki: join(stateDir, 'pki'), etcd: join(stateDir, 'etcd'), logs: join(stateDir, 'logs') };
  await Promise.all(Object.values(dirs).map((d) => mkdir(d, { recursive: true, mode: 0o700 })));
  const binaries = opts.binaries ?? (await ensureKubeBinaries());
  const node = opts.node;
  const address = node ? (node.address ?? hostAddress()) : '127.0.0.1';
  if (!address) throw new Error('a node needs a non-loopback IPv4 address on this host; none found');
  const serviceCidr = node?.serviceCidr ?? DEFAULT_SERVICE_CIDR;
  const [pki, tokens] = await Promise.all([ensurePki(dirs.pki, node ? [address] : []), loadTokens(dirs.pki)]);
  const kubeletClient = node
    ? await issueCert(dirs.pki, 'apiserver-kubelet-client', {
        cn: 'kube-apiserver-kubelet-client',
        orgs: ['system:masters'],
      })
    : undefined;
  await writeFile(join(dirs.pki, 'tokens.csv'), tokenCsv(tokens), { mode: 0o600 });
  const caCert = readFileSync(pki.caCert);

  const children: GuardedChild[] = [];
  const stop = async () => {
    for (const c of children.reverse()) await c.stop();
    if (ephemeral) await rm(stateDir, { recursive: true, force: true });
  };
  const died = () => children.find((c) => c.proc.exitCode !== null)?.name;

  try {
    const [etcdPort, apiPort] = [await freePort(), await freePort()];
    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    children.push(
      startGuarded(
        'etcd',
        binaries.etcd,
        [
          '--data-dir',
          dirs.etcd,
          '--listen-client-urls',
          etcdUrl,
          '--advertise-client-urls',
          etcdUrl,
          '--listen-peer-urls',
          'http://127.0.0.1:0',
          '--unsafe-no-fsync',
          '--log-level',
          'warn',
        ],
        join(dirs.logs, 'etcd.log'),
      ),
    );
    await waitFor(
      'etcd',
      30_000,
      async () => ((await fetch(`${etcdUrl}/health`)).ok ? true : undefined),
      () => died() && `${died()} exited; see ${dirs.logs}`,
    );
    log(`etcd ready on ${etcdUrl}`);

    const server = `https://${address}:${apiPort}`;
    const nodeArgs = kubeletClient
      ? [
          '--endpoint-reconciler-type',
          'lease',
          '--authorization-mode',
          'Node,RBAC',
          '--kubelet-client-certificate',
          kubeletClient.cert,
          '--kubelet-client-key',
          kubeletClient.key,
          // The node's name is not in DNS: reach kubelets (logs, exec) at their InternalIP.
          '--kubelet-preferred-address-types',
          'InternalIP,Hostname',
        ]
      : [
          '--endpoint-reconciler-type',
          'none',
          '--authorization-mode',
          'RBAC',
          '--disable-admission-plugins',
          'ServiceAccount',
        ];
    children.push(
      startGuarded(
        'kube-apiserver',
        binaries.kubeApiserver,
        [
          '--etcd-servers',
          etcdUrl,
          '--bind-address',
          address,
          '--secure-port',
          String(apiPort),
          '--advertise-address',
          node ? address : advertiseAddress(),
          ...nodeArgs,
          '--cert-dir',
          dirs.pki,
          '--tls-cert-file',
          pki.serverCert,
          '--tls-private-key-file',
          pki.serverKey,
          '--client-ca-file',
          pki.caCert,
          '--token-auth-file',
          join(dirs.pki, 'tokens.csv'),
          '--service-account-issuer',
          server,
          '--service-account-key-file',
          pki.saPub,
          '--service-account-signing-key-file',
          pki.saKey,
          '--service-cluster-ip-range',
          serviceCidr,
          '--allow-privileged',
          '--profiling=false',
          '--v=0',
        ],
        join(dirs.logs, 'kube-apiserver.log'),
      ),
    );
    await waitFor(
      'kube-apiserver /readyz',
      90_000,
      async () => {
        const r = await httpsGet(`${server}/readyz`, caCert, tokens.admin);
        return r.status === 200 ? true : undefined;
      },
      () => died() && `${died()} exited; see ${dirs.logs}`,
    );
    log(`kube-apiserver ready on ${server}`);

    const kubeconfigPath = join(stateDir, 'kubeconfig');
    await writeKubeconfig(kubeconfigPath, server, pki.caCert, tokens);
    await bootstrapCluster(kubeconfigPath, opts.crdDir, log);
    return {
      server,
      kubeconfigPath,
      tokens,
      caCert,
      binaries,
      stateDir,
      startMs: Date.now() - t0,
      pki,
      address,
      serviceCidr,
      servesPods: Boolean(node),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
