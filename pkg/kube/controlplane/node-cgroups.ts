import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = '/sys/fs/cgroup';

/** Every cgroup hierarchy mounted under /sys/fs/cgroup (v1 controllers, named ones, the unified one). */
export function hierarchies(): string[] {
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8').split('\n');
  const out = new Set<string>();
  for (const line of mounts) {
    const [pre, post = ''] = line.split(' - ');
    const mountPoint = pre?.split(' ')[4];
    const fsType = post.split(' ')[0];
    if (mountPoint?.startsWith(`${ROOT}/`) && (fsType === 'cgroup' || fsType === 'cgroup2'))
      out.add(mountPoint);
  }
  if (out.size === 0 && existsSync(join(ROOT, 'cgroup.controllers'))) out.add(ROOT); // pure v2
  return [...out];
}

function subdirs(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => join(dir, e.name));
  } catch {
    return [];
  }
}

function pidsUnder(dir: string): number[] {
  const pids: number[] = [];
  const walk = (d: string) => {
    try {
      for (const l of readFileSync(join(d, 'cgroup.procs'), 'utf8').split('\n')) if (l) pids.push(Number(l));
    } catch {}
    for (const s of subdirs(d)) walk(s);
  };
  walk(dir);
  return pids;
}

/**
 * The node's cgroup `/<name>` in every hierarchy: the kubelet's cgroupRoot (pods live below it) and,
 * in the pids hierarchy, `/<name>/components` for containerd (hence its shims) and the kube
 * components, so that one walk finds every process the node started. Memory accounting of the
 * components is left where the caller's is.
 */
export class NodeCgroup {
  readonly name: string;
  readonly path: string;
  private readonly dirs: string[];

  constructor(name: string) {
    this.name = name;
    this.path = `/${name}`;
    this.dirs = hierarchies().map((h) => join(h, name));
  }

  create(): void {
    for (const d of this.dirs) {
      mkdirSync(d, { recursive: true });
      // A new cpuset has no CPUs or memory nodes: processes cannot join it until it gets its parent's.
      for (const f of ['cpuset.cpus', 'cpuset.mems']) {
        if (existsSync(join(d, f)) && !readFileSync(join(d, f), 'utf8').trim()) {
          writeFileSync(join(d, f), readFileSync(join(d, '..', f), 'utf8').trim());
        }
      }
    }
    const comp = this.componentsDir();
    if (comp) mkdirSync(comp, { recursive: true });
  }

  /** Where components join (its cgroup.procs file), or undefined without a pids hierarchy. */
  componentsProcs(): string | undefined {
    const d = this.componentsDir();
    return d ? join(d, 'cgroup.procs') : undefined;
  }

  private componentsDir(): string | undefined {
    // v1: the pids hierarchy, else the hybrid's unified one; pure v2 (untested here): the only one.
    const pids =
      this.dirs.find((d) => d.startsWith(`${ROOT}/pids/`)) ??
      this.dirs.find((d) => d.startsWith(`${ROOT}/unified/`)) ??
      (this.dirs.length === 1 ? this.dirs[0] : undefined);
    return pids ? join(pids, 'components') : undefined;
  }

  /** Every process in the node's cgroups, in any hierarchy. */
  pids(): number[] {
    return [...new Set(this.dirs.flatMap(pidsUnder))];
  }

  /** SIGKILLs every process below the cgroup until none is left (or the timeout). */
  async killAll(timeoutMs = 10_000): Promise<number[]> {
    const deadline = Date.now() + timeoutMs;
    const killed = new Set<number>();
    for (;;) {
      const pids = this.pids();
      if (pids.length === 0) return [...killed];
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
          killed.add(pid);
        } catch {}
      }
      if (Date.now() > deadline)
        throw new Error(`processes survive SIGKILL in ${this.path}: ${pids.join(' ')}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Removes the cgroup tree (deepest first) in every hierarchy; its processes must be gone. */
  async remove(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const rmTree = (d: string) => {
      for (const s of subdirs(d)) rmTree(s);
      rmdirSync(d);
    };
    for (const d of this.dirs) {
      for (;;) {
        try {
          if (existsSync(d)) rmTree(d);
          break;
        } catch (err) {
          // EBUSY while the kernel finishes tearing down a just-killed process.
          if (Date.now() > deadline) throw new Error(`cannot remove cgroup ${d}: ${String(err)}`);
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    }
  }

  /** Peak memory of the pods (kubepods below the cgroup), page cache included, in bytes. */
  podsPeakMemory(): number {
    const f = join(ROOT, 'memory', this.name, 'memory.max_usage_in_bytes');
    return existsSync(f) ? Number(readFileSync(f, 'utf8')) : 0;
  }
}

/** Names of stale node cgroups (`berth-node-<pid>`) whose owning process is gone. */
export function staleNodeCgroups(prefix = 'berth-node-'): string[] {
  const names = new Set<string>();
  for (const h of hierarchies()) {
    for (const d of subdirs(h)) {
      const base = d.slice(h.length + 1);
      const m = base.startsWith(prefix) ? /-(\d+)$/.exec(base) : null;
      if (!m) continue;
      try {
        process.kill(Number(m[1]), 0);
      } catch {
        names.add(base);
      }
    }
  }
  return [...names];
}
