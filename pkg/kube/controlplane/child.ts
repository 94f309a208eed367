import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';

/**
 * Runs a binary behind a tiny shell guard that kills it when our process disappears, even by
 * SIGKILL (Node cannot set PR_SET_PDEATHSIG): the guard polls the parent pid once a second.
 * SIGTERM to the guard stops the child and waits for it.
 */
const GUARD = [
  'parent=$1; shift',
  '"$@" & child=$!',
  "trap 'kill -TERM $child 2>/dev/null; wait $child; exit 0' TERM INT",
  'while kill -0 "$parent" 2>/dev/null && kill -0 "$child" 2>/dev/null; do sleep 1 & wait $!; done',
  'kill -TERM $child 2>/dev/null',
  'wait $child',
].join('\n');

export interface GuardedChild {
  name: string;
  proc: ChildProcess;
  exited: Promise<number | null>;
  stop(timeoutMs?: number): Promise<void>;
}

export function startGuarded(name: string, bin: string, args: string[], logFile: string): GuardedChild {
  const log = createWriteStream(logFile, { flags: 'a' });
  // The log is for reading after a failure: a log file that cannot be opened or written (its
  // directory removed under it, a full disk) loses that output but must not crash the process that
  // supervises the child — an 'error' without a listener would.
  log.on('error', () => {});
  const proc = spawn('sh', ['-c', GUARD, 'berth-guard', String(process.pid), bin, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.stdout?.pipe(log, { end: false });
  proc.stderr?.pipe(log, { end: false });
  const exited = once(proc, 'exit').then(([code]) => {
    log.end();
    return code as number | null;
  });
  return {
    name,
    proc,
    exited,
    async stop(timeoutMs = 10_000) {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
      await exited;
      clearTimeout(timer);
    },
  };
}
