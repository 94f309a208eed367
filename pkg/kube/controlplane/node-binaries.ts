import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from './binaries.ts';

const run = promisify(execFile);

export interface NodeBinaries {
  dir: string;
  kubelet: string;
  kubeControllerManager: string;
  kubeScheduler: string;
  kubeProxy: string;
  coredns: string;
  kubeRouter: string;
  pause: string;
  /** From Debian's packages (hack/ensure-node-packages.sh). */
  containerd: string;
  ctr: string;
  cniBinDir: string;
}

const NAMES = {
  kubelet: 'kubelet',
  kubeControllerManager: 'kube-controller-manager',
  kubeScheduler: 'kube-scheduler',
  kubeProxy: 'kube-proxy',
  coredns: 'coredns',
  kubeRouter: 'kube-router',
  pause: 'pause',
} as const;

/**
 * Installs the node's Debian packages when missing (containerd, runc, CNI plugins, nftables,
 * iptables, ipset, conntrack) and returns the cached node binaries, building them first when
 * missing (hack/build-node.sh is idempotent and prints its cache directory last).
 */
export async function ensureNodeBinaries(opts: { onBuildStart?: () => void } = {}): Promise<NodeBinaries> {
  const hack = join(projectRoot(), 'hack');
  opts.onBuildStart?.();
  const long = { maxBuffer: 16 * 1024 * 1024, timeout: 60 * 60 * 1000 };
  await run('bash', [join(hack, 'ensure-node-packages.sh')], long);
  const { stdout } = await run('bash', [join(hack, 'build-node.sh')], long);
  const dir = stdout.trim().split('\n').pop() ?? '';
  const paths = Object.fromEntries(Object.entries(NAMES).map(([k, f]) => [k, join(dir, f)])) as Record<
    keyof typeof NAMES,
    string
  >;
  const missing = Object.values(paths).filter((p) => !existsSync(p));
  if (!dir || missing.length) {
    throw new Error(
      `hack/build-node.sh did not produce ${missing.join(', ') || 'its binaries'} (last line: ${dir})`,
    );
  }
  return { dir, ...paths, containerd: '/usr/bin/containerd', ctr: '/usr/bin/ctr', cniBinDir: '/usr/lib/cni' };
}
