import { execFile, spawn } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * What a node changes on the host and teardown puts back: sysctls (the kubelet's kernel tunables,
 * ip_forward from the CNI bridge, conntrack settings), nftables tables (kube-proxy's, the kubelet's
 * and CNI's iptables-nft chains, kube-router's), ipsets, network links (cni0, veths) and host paths
 * the runtime creates outside the node's state dir.
 */
export interface HostSnapshot {
  sysctls: Record<string, string>;
  /** `family name` → `nft -s list table` text. */
  nftTables: Record<string, string>;
  /** iptables-legacy rules (kernels with the legacy tables), as `iptables-legacy-save` prints them. */
  legacyIptables: string;
  ipsets: string[];
  links: string[];
  /** Host paths a node may create outside its state dir → whether they existed before. */
  paths: Record<string, boolean>;
}

/** Created by containerd (shim sockets), libcni (its result cache), the kubelet (container log links). */
export const HOST_PATHS = [
  '/run/containerd',
  '/var/lib/cni',
  '/var/log/containers',
  '/var/log/pods',
  '/var/lib/kubelet',
  '/run/netns',
  '/etc/cni',
  '/opt/cni',
  '/opt/containerd',
  '/var/lib/containerd',
  '/etc/kubernetes',
  '/var/run/kubernetes',
  '/var/lib/kube-router',
  '/var/lib/calico',
];

/** Writable sysctls under these trees are snapshotted and restored. */
const SYSCTL_TREES = ['net', 'vm', 'kernel'];
/** Writable but changing on their own or write-only. */
const VOLATILE =
  /^(kernel\.ns_last_pid|kernel\.random\.|kernel\.tainted|kernel\.perf_event_max_sample_rate|kernel\.sched_|vm\.drop_caches|vm\.compact_memory|vm\.stat_refresh|net\.ipv[46]\.route\.flush)/;

/** Every readable, writable sysctl under net/vm/kernel (interfaces' too), as `key → value`. */
export function readSysctls(): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string, key: string) => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(dir, e.name);
      const k = key ? `${key}.${e.name}` : e.name;
      if (e.isDirectory()) walk(p, k);
      else if (!VOLATILE.test(k)) {
        try {
          if (!(lstatSync(p).mode & 0o200)) continue;
          out[k] = readFileSync(p, 'utf8').trim().replace(/\s+/g, ' ');
        } catch {}
      }
    }
  };
  for (const t of SYSCTL_TREES) walk(join('/proc/sys', t), t);
  return out;
}

/** Sets a sysctl when the kernel has it (teardown restores it from the snapshot). */
export function setSysctl(key: string, value: string): void {
  const f = join('/proc/sys', ...key.split('.'));
  if (existsSync(f)) writeFileSync(f, value);
}

function writeSysctl(key: string, value: string): boolean {
  try {
    writeFileSync(join('/proc/sys', ...key.split('.')), value);
    return true;
  } catch {
    return false;
  }
}

async function tryRun(cmd: string, args: string[], input?: string): Promise<string> {
  if (input === undefined) {
    try {
      return (await run(cmd, args, { maxBuffer: 64 * 1024 * 1024 })).stdout;
    } catch {
      return '';
    }
  }
  return new Promise((resolve) => {
    const p = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d) => {
      out += d;
    });
    p.stderr.on('data', (d) => {
      out += d;
    });
    p.on('error', () => resolve(out));
    p.on('close', () => resolve(out));
    p.stdin.end(input);
  });
}

export async function nftTables(): Promise<Record<string, string>> {
  const list = await tryRun('nft', ['list', 'tables']);
  const names = list
    .split('\n')
    .map((l) => /^table (\S+) (\S+)$/.exec(l.trim()))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => `${m[1]} ${m[2]}`);
  const texts = await Promise.all(names.map((n) => tryRun('nft', ['-s', 'list', 'table', ...n.split(' ')])));
  return Object.fromEntries(names.map((n, i) => [n, texts[i] ?? '']));
}

export async function legacyIptables(): Promise<string> {
  const out = await Promise.all(['iptables-legacy-save', 'ip6tables-legacy-save'].map((c) => tryRun(c, [])));
  // Drop the comment lines (they carry timestamps) and counters.
  return out
    .join('')
    .split('\n')
    .filter((l) => !l.startsWith('#'))
    .map((l) => l.replace(/\[\d+:\d+\]/g, ''))
    .join('\n');
}

export async function ipsets(): Promise<string[]> {
  return (await tryRun('ipset', ['list', '-n'])).split('\n').filter(Boolean).sort();
}

export async function links(): Promise<string[]> {
  return (await tryRun('ip', ['-o', 'link', 'show']))
    .split('\n')
    .map((l) => /^\d+: ([^:@]+)/.exec(l)?.[1])
    .filter((n): n is string => Boolean(n))
    .sort();
}

export async function snapshotHost(): Promise<HostSnapshot> {
  const [nft, legacy, sets, ls] = await Promise.all([nftTables(), legacyIptables(), ipsets(), links()]);
  return {
    sysctls: readSysctls(),
    nftTables: nft,
    legacyIptables: legacy,
    ipsets: sets,
    links: ls,
    paths: Object.fromEntries(HOST_PATHS.map((p) => [p, existsSync(p)])),
  };
}

/** Mount points at or below `dir`, newest first (so children go before their parents). */
export function mountsUnder(dir: string): string[] {
  const unoctal = (s: string) =>
    s.replace(/\\(\d{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8)));
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4])
    .filter((m): m is string => Boolean(m))
    .map(unoctal)
    .filter((m) => m === dir || m.startsWith(`${dir}/`))
    .reverse();
}

/** Unmounts everything at or below `dir` (lazily when busy). */
export async function unmountUnder(dir: string): Promise<void> {
  for (let round = 0; round < 20; round++) {
    const mounts = mountsUnder(dir);
    if (mounts.length === 0) return;
    for (const m of mounts) {
      try {
        await run('umount', [m]);
      } catch {
        await run('umount', ['-l', m]).catch(() => {});
      }
    }
  }
  const left = mountsUnder(dir);
  if (left.length) throw new Error(`cannot unmount under ${dir}: ${left.join(', ')}`);
}

/**
 * Puts back what the node changed: deletes new links (cni0, leftover veths), restores nftables
 * tables (deletes new ones, reloads changed ones), iptables-legacy rules, ipsets, sysctls, and
 * removes host paths that did not exist before (or, for the kubelet's container log directory,
 * only the links into `stateDir`). Returns what it had to repair, for the log (`UNREPAIRED: …` for
 * what it could not).
 */
export async function restoreHost(before: HostSnapshot, stateDir: string): Promise<string[]> {
  const repaired: string[] = [];
  for (const l of await links()) {
    if (!before.links.includes(l) && (l === 'cni0' || l.startsWith('veth') || l.startsWith('kube-'))) {
      await tryRun('ip', ['link', 'delete', l]);
      repaired.push(`link ${l}`);
    }
  }
  const now = await nftTables();
  for (const [t, text] of Object.entries(now)) {
    if (before.nftTables[t] === text) continue;
    await tryRun('nft', ['delete', 'table', ...t.split(' ')]);
    if (before.nftTables[t] !== undefined) await tryRun('nft', ['-f', '-'], before.nftTables[t]);
    repaired.push(`nft table ${t}`);
  }
  for (const [t, text] of Object.entries(before.nftTables)) {
    if (now[t] === undefined) {
      await tryRun('nft', ['-f', '-'], text);
      repaired.push(`nft table ${t} (recreated)`);
    }
  }
  if ((await legacyIptables()) !== before.legacyIptables) {
    // Nothing the node runs uses the legacy tables (iptables is iptables-nft): say so rather than guess.
    repaired.push('UNREPAIRED: iptables-legacy rules changed');
  }
  for (const s of await ipsets()) {
    if (!before.ipsets.includes(s)) {
      await tryRun('ipset', ['destroy', s]);
      repaired.push(`ipset ${s}`);
    }
  }
  const sysctls = readSysctls();
  for (const [k, v] of Object.entries(before.sysctls)) {
    if (sysctls[k] !== undefined && sysctls[k] !== v && writeSysctl(k, v)) repaired.push(`sysctl ${k}=${v}`);
  }
  for (const [p, existed] of Object.entries(before.paths)) {
    if (!existed && existsSync(p)) {
      rmSync(p, { recursive: true, force: true });
      repaired.push(`path ${p}`);
    } else if (existed && p === '/var/log/containers') {
      for (const f of readdirSync(p)) {
        const link = join(p, f);
        try {
          if (readlinkSync(link).startsWith(`${stateDir}/`)) rmSync(link, { force: true });
        } catch {}
      }
    }
  }
  return repaired;
}
