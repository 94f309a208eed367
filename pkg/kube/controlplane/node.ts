import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { applyObjects } from '../apply.ts';
import { HttpClient } from '../client/http-client.ts';
import { Scheme } from '../kinds.ts';
import { type GuardedChild, startGuarded } from './child.ts';
import { setSysctl, snapshotHost } from './host-state.ts';
import { waitFor } from './https-probe.ts';
import type { ControlPlane } from './index.ts';
import { ensureNodeBinaries, type NodeBinaries } from './node-binaries.ts';
import { NodeCgroup } from './node-cgroups.ts';
import { componentArgs } from './node-components.ts';
import { cniConflist, containerdConfig, nodeDirs } from './node-config.ts';
import { corednsObjects, dnsIpOf, resolveIn } from './node-dns.ts';
import { corednsImage, pauseImage } from './node-images.ts';
import { deploymentAvailable, Kinds, nodeCondition } from './node-kinds.ts';
import { acquireNodeLock, LOCK_FILE, type NodeLock, reaperLog } from './node-lock.ts';
import { kubeRouterArgs, kubeRouterRbac } from './node-netpol.ts';
import { nodeCredentials } from './node-pki.ts';
import { type Reaper, startReaper } from './node-reaper.ts';
import { teardownNode } from './node-teardown.ts';
import { freePort } from './ports.ts';

const run = promisify(execFile);

export interface NodeOptions {
  /** Where the node keeps containerd's and the kubelet's state, configs and logs; a temp dir when absent. */
  stateDir?: string;
  nodeName?: string;
  /** The pods' network; the node gets its first /24. */
  clusterCidr?: string;
  binaries?: NodeBinaries;
  /** Enforce NetworkPolicy with kube-router (iptables + ipset). Default true. */
  networkPolicy?: boolean;
  /** How long to wait for the node to be Ready and CoreDNS to answer. */
  readyTimeoutMs?: number;
  log?: (msg: string) => void;
}

export interface LocalNode {
  nodeName: string;
  /** The admin kubeconfig of the control plane (the node's components have their own). */
  kubeconfigPath: string;
  podCidr: string;
  clusterCidr: string;
  dnsIp: string;
  stateDir: string;
  /** containerd's socket, for `ctr --address`. */
  containerdSocket: string;
  binaries: NodeBinaries;
  startMs: number;
  /** Imports an image archive (OCI or docker) into containerd's `k8s.io` namespace, where the kubelet finds it. */
  importImage(tarPath: string): Promise<void>;
  /** Peak memory of the pods' cgroup so far (page cache included), bytes. */
  podsPeakMemory(): number;
  /** Every process the node runs (components, shims, containers). */
  pids(): number[];
  /** Stops everything, unmounts, restores sysctls, nftables, ipsets, links, removes the state dir. */
  stop(): Promise<void>;
}

/**
 * A Kubernetes node on this host for `cp` (started with `node`): containerd, kube-controller-manager,
 * kube-scheduler, kubelet, kube-proxy (nftables), CoreDNS (a Deployment behind `kube-dns`) and
 * kube-router enforcing NetworkPolicy.
 * Needs root. One node per host at a time (cni0 and kube-proxy's tables are host-wide).
 */
export async function startNode(cp: ControlPlane, opts: NodeOptions = {}): Promise<LocalNode> {
  const t0 = Date.now();
  const log = opts.log ?? (() => {});
  if (!cp.servesPods) throw new Error('startNode needs a control plane started with { node: {} }');
  if (process.getuid?.() !== 0) throw new Error('a local node needs root (containerd, mounts, nftables)');
  const nodeName = opts.nodeName ?? 'berth-node';
  const clusterCidr = opts.clusterCidr ?? '10.244.0.0/16';
  const dnsIp = dnsIpOf(cp.serviceCidr);
  const lock: NodeLock = await acquireNodeLock(log);
  const ephemeral = !opts.stateDir;
  const d = nodeDirs(opts.stateDir ?? (await mkdtemp(join(tmpdir(), 'berth-node-'))));
  const cgroup = new NodeCgroup(`berth-node-${process.pid}`);
  const children: GuardedChild[] = [];
  let snapshot: Awaited<ReturnType<typeof snapshotHost>> | undefined;
  let reaper: Reaper | undefined;
  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= teardownNode({ children, cgroup, stateDir: d.root, ephemeral, snapshot, lock, log }).then(
      () => reaper?.dismiss(),
    );
    return stopped;
  };

  try {
    snapshot = await snapshotHost();
    await lock.record({ stateDir: d.root, cgroup: cgroup.name, snapshot, ephemeral });
    await Promise.all(
      Object.values(d).map((p) =>
        p.endsWith('.sock') || p.endsWith('.toml') ? undefined : mkdir(p, { recursive: true, mode: 0o700 }),
      ),
    );
    reaper = startReaper(LOCK_FILE, reaperLog(LOCK_FILE));
    const binaries =
      opts.binaries ?? (await ensureNodeBinaries({ onBuildStart: () => log('node binaries: checking') }));
    cgroup.create();
    const procs = cgroup.componentsProcs();
    const died = () => children.find((c) => c.proc.exitCode !== null)?.name;
    const failFast = () => died() && `${died()} exited; see ${d.logs}/${died()}.log`;
    const start = (name: string, bin: string, args: string[]) => {
      // Joins the node's pids cgroup before exec, so teardown finds it and all it spawns.
      const enter = procs ? `echo $$ > ${procs}; ` : '';
      children.push(
        startGuarded(
          name,
          '/bin/sh',
          ['-c', `${enter}exec "$@"`, name, bin, ...args],
          join(d.logs, `${name}.log`),
        ),
      );
    };

    // Pods route through the host; bridged traffic must meet kube-proxy's and kube-router's rules.
    for (const k of ['net.ipv4.ip_forward', 'net.bridge.bridge-nf-call-iptables']) setSysctl(k, '1');
    const [creds, pause, coredns] = await Promise.all([
      nodeCredentials(cp, nodeName, d.config),
      pauseImage(binaries.pause, join(binaries.dir, 'images')),
      corednsImage(binaries.coredns, join(binaries.dir, 'images')),
    ]);

    await writeFile(d.containerdConfig, containerdConfig(d, pause.ref, binaries.cniBinDir));
    start('containerd', binaries.containerd, ['--config', d.containerdConfig]);
    const ctr = (...args: string[]) =>
      run(binaries.ctr, ['--address', d.containerdSock, '--namespace', 'k8s.io', ...args], {
        maxBuffer: 16 << 20,
      });
    await waitFor(
      'containerd',
      30_000,
      async () => (existsSync(d.containerdSock) && (await ctr('version')) ? true : undefined),
      failFast,
    );
    const importImage = async (tar: string) => {
      await ctr('images', 'import', '--snapshotter', 'overlayfs', tar);
    };
    await Promise.all([importImage(pause.file), importImage(coredns.file)]);
    log(`containerd ready, images imported (${Date.now() - t0} ms)`);

    const args = await componentArgs({ d, cp, creds, cgroupRoot: cgroup.path, nodeName, clusterCidr, dnsIp });
    for (const [name, bin] of [
      ['kube-controller-manager', binaries.kubeControllerManager],
      ['kube-scheduler', binaries.kubeScheduler],
      ['kube-proxy', binaries.kubeProxy],
      ['kubelet', binaries.kubelet],
    ] as const)
      start(name, bin, args[name]);

    const kc = new KubeConfig();
    kc.loadFromFile(cp.kubeconfigPath);
    const client = new HttpClient({ kc, scheme: new Scheme() });
    const netpol = opts.networkPolicy ?? true;
    await applyObjects(client, [...corednsObjects(coredns.ref, dnsIp), ...(netpol ? kubeRouterRbac() : [])], {
      fieldManager: 'berth-local-node',
    });
    const timeout = opts.readyTimeoutMs ?? 120_000;
    const podCidr = await waitFor(
      `node ${nodeName} podCIDR`,
      timeout,
      async () => (await client.get(Kinds.Node, { name: nodeName }).catch(() => undefined))?.spec?.podCIDR,
      failFast,
    );
    await writeFile(join(d.cniConf, '10-berth.conflist'), cniConflist(podCidr, d.cniIpam));
    const routerHealth = await freePort();
    if (netpol) {
      const args = {
        kubeconfig: creds.kubeconfigs.kubeRouter,
        nodeName,
        serviceCidr: cp.serviceCidr,
        healthPort: routerHealth,
      };
      start('kube-router', binaries.kubeRouter, kubeRouterArgs(args));
    }
    await waitFor(
      `node ${nodeName} Ready`,
      timeout,
      async () =>
        nodeCondition(await client.get(Kinds.Node, { name: nodeName }), 'Ready') === 'True'
          ? true
          : undefined,
      failFast,
    );
    log(`node ${nodeName} Ready (${Date.now() - t0} ms)`);
    if (netpol) {
      const url = `http://127.0.0.1:${routerHealth}/healthz`;
      await waitFor(
        'kube-router healthz',
        timeout,
        async () => ((await fetch(url)).ok ? true : undefined),
        failFast,
      );
    }
    await waitFor(
      'CoreDNS available',
      timeout,
      async () =>
        deploymentAvailable(await client.get(Kinds.Deployment, { name: 'coredns', namespace: 'kube-system' }))
          ? true
          : undefined,
      failFast,
    );
    await waitFor(
      'CoreDNS answers',
      timeout,
      async () =>
        (await resolveIn(dnsIp, 'kubernetes.default.svc.cluster.local')).length ? true : undefined,
      failFast,
    );
    log(`CoreDNS answers at ${dnsIp} (${Date.now() - t0} ms)`);

    return {
      nodeName,
      kubeconfigPath: cp.kubeconfigPath,
      podCidr,
      clusterCidr,
      dnsIp,
      stateDir: d.root,
      containerdSocket: d.containerdSock,
      binaries,
      startMs: Date.now() - t0,
      importImage,
      podsPeakMemory: () => cgroup.podsPeakMemory(),
      pids: () => cgroup.pids(),
      stop,
    };
  } catch (err) {
    const tails = children.map((c) => `--- ${c.name}\n${tail(join(d.logs, `${c.name}.log`))}`).join('\n');
    await stop().catch((e) => log(`node teardown after a failed start: ${String(e)}`));
    throw new Error(`${(err as Error).message}\n${tails}`);
  }
}

function tail(file: string, lines = 15): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
