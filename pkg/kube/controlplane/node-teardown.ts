import { readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { GuardedChild } from './child.ts';
import { type HostSnapshot, mountsUnder, restoreHost, unmountUnder } from './host-state.ts';
import type { NodeCgroup } from './node-cgroups.ts';
import type { NodeLock } from './node-lock.ts';

export interface Teardown {
  children: GuardedChild[];
  cgroup: NodeCgroup;
  stateDir: string;
  /** Remove the state dir (a temp dir the node made). */
  ephemeral: boolean;
  snapshot: HostSnapshot | undefined;
  lock: NodeLock;
  log: (msg: string) => void;
}

/**
 * Processes outside the node's cgroup that still name its state dir: the guards of child.ts (whose
 * owner died: they are stopping their child) and, a safety net, anything else (none expected).
 */
function strays(stateDir: string): Array<{ pid: number; guard: boolean }> {
  const out: Array<{ pid: number; guard: boolean }> = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    try {
      const argv = readFileSync(`/proc/${e}/cmdline`, 'utf8').split('\0');
      if (argv.some((a) => a.includes(`${stateDir}/`)))
        out.push({ pid: Number(e), guard: argv[3] === 'berth-guard' });
    } catch {}
  }
  return out;
}

/**
 * Stops the node and puts the host back: the kube components get SIGTERM; then every process left in
 * the node's cgroup (containers, pause, shims, containerd) SIGKILL; everything mounted under the
 * state dir is unmounted; links, nftables tables, ipsets, sysctls and host paths are restored from
 * the snapshot taken before the start; the cgroups and (when ephemeral) the state dir are removed.
 * Throws, after doing all it can, when something could not be restored.
 */
export async function teardownNode(t: Teardown): Promise<void> {
  const problems: string[] = [];
  const step = async (what: string, fn: () => Promise<unknown>) => {
    try {
      await fn();
    } catch (err) {
      problems.push(`${what}: ${(err as Error).message}`);
    }
  };
  await Promise.all(t.children.filter((c) => c.name !== 'containerd').map((c) => c.stop(5_000)));
  await step('kill node processes', () => t.cgroup.killAll());
  // The guards (outside the cgroup, their command lines name the state dir) exit with their child.
  await Promise.all(t.children.map((c) => c.stop(2_000)));
  for (const { pid, guard } of strays(t.stateDir)) {
    try {
      process.kill(pid, 'SIGKILL');
      if (!guard) problems.push(`process ${pid} outside the node's cgroup named ${t.stateDir}`);
    } catch {}
  }
  await step('unmount', () => unmountUnder(t.stateDir));
  if (t.snapshot) {
    const snapshot = t.snapshot;
    await step('restore host', async () => {
      const repaired = await restoreHost(snapshot, t.stateDir);
      if (repaired.length) t.log(`node teardown restored: ${repaired.join(', ')}`);
      problems.push(...repaired.filter((r) => r.startsWith('UNREPAIRED')));
    });
  }
  await step('remove cgroups', () => t.cgroup.remove());
  if (t.ephemeral) {
    if (mountsUnder(t.stateDir).length === 0)
      await step('remove state dir', () => rm(t.stateDir, { recursive: true, force: true }));
    else problems.push(`state dir ${t.stateDir} kept: still mounted below`);
  }
  if (problems.length === 0) await t.lock.release();
  else
    throw new Error(
      `node teardown incomplete (the lock file is kept for the next start to retry):\n${problems.join('\n')}`,
    );
}
