/**
 * The node's reaper: a small detached process that outlives us. When the process that started the
 * node dies without `stop()` (SIGKILL, a crash), the guards stop the node's own children within a
 * second but not what containerd started (shims, containers), nor the mounts, rules and sysctls:
 * the reaper then tears the node down from the lock file's record, as the next start would.
 *
 *   node node-reaper.ts <owner pid> <lock file>
 */
import { spawn } from 'node:child_process';
import { openSync, realpathSync } from 'node:fs';
import { alive, reapStaleNode } from './node-lock.ts';

export interface Reaper {
  /** The owner stopped its node itself: the reaper goes away. */
  dismiss(): void;
}

/** Starts the reaper for this process's node; its output goes to `logFile`. */
export function startReaper(lockFile: string, logFile: string): Reaper {
  const self = new URL(import.meta.url).pathname;
  const out = openSync(logFile, 'a');
  const proc = spawn(process.execPath, [self, String(process.pid), lockFile], {
    detached: true,
    stdio: ['ignore', out, out],
  });
  proc.unref();
  return {
    dismiss() {
      try {
        if (proc.pid) process.kill(proc.pid, 'SIGTERM');
      } catch {}
    },
  };
}

async function main(owner: number, lockFile: string): Promise<void> {
  process.on('SIGTERM', () => process.exit(0));
  while (alive(owner)) await new Promise((r) => setTimeout(r, 1000));
  const log = (m: string) => console.log(`${new Date().toISOString()} reaper: ${m}`);
  log(`process ${owner} is gone: tearing its node down`);
  await reapStaleNode(log, lockFile);
  log('done');
}

if (process.argv[1] && realpathSync(process.argv[1]) === realpathSync(new URL(import.meta.url).pathname)) {
  main(Number(process.argv[2]), String(process.argv[3])).catch((err) => {
    console.error(`reaper: ${(err as Error).stack ?? String(err)}`);
    process.exit(1);
  });
}
