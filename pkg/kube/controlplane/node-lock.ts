import { readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HostSnapshot } from './host-state.ts';
import { NodeCgroup } from './node-cgroups.ts';
import { teardownNode } from './node-teardown.ts';

/** One node per host: cni0, kube-proxy's nftables tables and the kubelet's chains are host-wide. */
export const LOCK_FILE = join(tmpdir(), 'berth-node.lock.json');
/** The reaper's log (node-reaper.ts), beside the lock and removed with it. */
export const reaperLog = (lockFile: string) => lockFile.replace(/\.json$/, '') + '.reaper.log';
const removeLock = (file: string) =>
  Promise.all([rm(file, { force: true }), rm(reaperLog(file), { force: true })]).then(() => {});

export interface NodeRecord {
  pid: number;
  stateDir?: string;
  cgroup?: string;
  ephemeral?: boolean;
  snapshot?: HostSnapshot;
}

export interface NodeLock {
  /** Writes what a later start needs to clean up after us if we die without tearing down. */
  record(info: Omit<NodeRecord, 'pid'>): Promise<void>;
  release(): Promise<void>;
}

/** Whether process `pid` exists (signal 0 checks without sending anything). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Tears down the node of a process that died without doing it (its processes killed, mounts, host
 * rules and sysctls restored from its record) and removes its lock. No-op without a lock or when
 * its owner lives. Returns whether there was one to reap.
 */
export async function reapStaleNode(log: (m: string) => void, file = LOCK_FILE): Promise<boolean> {
  let prev: NodeRecord | undefined;
  try {
    prev = JSON.parse(readFileSync(file, 'utf8')) as NodeRecord;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
  }
  if (prev && alive(prev.pid)) return false;
  if (prev?.cgroup && prev.stateDir) {
    log(`cleaning up the node of dead process ${prev.pid} (${prev.stateDir})`);
    await teardownNode({
      children: [],
      cgroup: new NodeCgroup(prev.cgroup),
      stateDir: prev.stateDir,
      ephemeral: prev.ephemeral ?? false,
      snapshot: prev.snapshot,
      lock: { record: async () => {}, release: () => removeLock(file) },
      log,
    });
  } else await removeLock(file);
  return true;
}

/**
 * Takes the host's node lock, reaping a node left by a dead process first. While another live
 * process holds it, waits up to `waitMs` (BERTH_NODE_LOCK_WAIT_SECONDS, default 20 min: test files
 * and people queue for the one node a host runs), then throws naming the owner.
 */
export async function acquireNodeLock(
  log: (m: string) => void,
  file = LOCK_FILE,
  waitMs = Number(process.env.BERTH_NODE_LOCK_WAIT_SECONDS ?? 1200) * 1000,
): Promise<NodeLock> {
  const deadline = Date.now() + waitMs;
  let said = false;
  for (let attempt = 0; ; attempt++) {
    try {
      await writeFile(file, JSON.stringify({ pid: process.pid }), { flag: 'wx', mode: 0o600 });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if (await reapStaleNode(log, file)) continue;
    let owner = '?';
    try {
      owner = String((JSON.parse(readFileSync(file, 'utf8')) as NodeRecord).pid);
    } catch {}
    if (Date.now() >= deadline)
      throw new Error(`a local node already runs on this host (pid ${owner}, ${file})`);
    if (!said) log(`waiting for the node of pid ${owner} to stop (one node per host)`);
    said = true;
    await new Promise((r) => setTimeout(r, 1000 + (attempt % 5) * 200));
  }
  return {
    record: (info) => writeFile(file, JSON.stringify({ pid: process.pid, ...info }), { mode: 0o600 }),
    release: () => removeLock(file),
  };
}
