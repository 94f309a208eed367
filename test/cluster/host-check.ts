/**
 * What a node may change on the host, read so a test can compare before and after: sysctls, the
 * nftables ruleset (stateless: no counters), iptables-legacy rules, ipsets, network links, mount
 * points, top-level cgroups, the host paths a runtime creates, and processes of the node's kinds.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import {
  HOST_PATHS,
  ipsets,
  legacyIptables,
  links,
  readSysctls,
} from '../../pkg/kube/controlplane/host-state.ts';
import { hierarchies } from '../../pkg/kube/controlplane/node-cgroups.ts';

const run = promisify(execFile);

const NODE_PROCESS =
  /(^|\/)(containerd|containerd-shim[\w-]*|runc|kubelet|kube-proxy|kube-scheduler|kube-controller-manager|kube-router|coredns|pause|smoke)$/;

export interface HostState {
  sysctls: Record<string, string>;
  nft: string;
  legacy: string;
  ipsets: string[];
  links: string[];
  mounts: string[];
  cgroups: string[];
  paths: Record<string, boolean>;
  /** `pid comm` of processes that look like a node's. */
  processes: string[];
}

function nodeProcesses(): string[] {
  const out: string[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const argv0 = readFileSync(`/proc/${e}/cmdline`, 'utf8').split('\0')[0] ?? '';
      if (NODE_PROCESS.test(argv0)) out.push(`${e} ${argv0}`);
    } catch {}
  }
  return out.sort();
}

export async function readHost(): Promise<HostState> {
  const [nft, legacy, sets, ls] = await Promise.all([
    run('nft', ['-s', 'list', 'ruleset']).then((r) => r.stdout),
    legacyIptables(),
    ipsets(),
    links(),
  ]);
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .filter(Boolean)
    .sort();
  const cgroups = hierarchies().flatMap((h) =>
    readdirSync(h, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => `${h}/${d.name}`),
  );
  return {
    sysctls: readSysctls(),
    nft,
    legacy,
    ipsets: sets,
    links: ls,
    mounts,
    cgroups: cgroups.sort(),
    paths: Object.fromEntries(HOST_PATHS.map((p) => [p, existsSync(p)])),
    processes: nodeProcesses(),
  };
}

/** Sysctls whose values differ (keys only present on one side — e.g. a new interface's — are left out). */
export function sysctlDiff(a: Record<string, string>, b: Record<string, string>): string[] {
  return Object.keys(a)
    .filter((k) => b[k] !== undefined && a[k] !== b[k])
    .map((k) => `${k}: ${a[k]} -> ${b[k]}`);
}

/** Resident memory (VmRSS) of processes, bytes. */
export function rssOf(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      total += Number(m?.[1] ?? 0) * 1024;
    } catch {}
  }
  return total;
}

/** Processes whose command line names `dir` (a control plane's etcd and kube-apiserver). */
export function pidsNaming(dir: string): number[] {
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${e}/cmdline`, 'utf8').includes(dir)) out.push(Number(e));
    } catch {}
  }
  return out;
}
