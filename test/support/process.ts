import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..', '..');

export interface Spawned {
  proc: ChildProcess;
  output: () => string;
  /** Resolves with the first output line matching `re`; rejects when the process exits first. */
  waitForLine(re: RegExp, timeoutMs?: number): Promise<string>;
  exited: Promise<number | null>;
}

/**
 * Runs `berth <args>` from the source tree on the pinned Node, capturing stdout and stderr.
 * `BERTH_NODE_FLAGS` (space-separated) adds Node flags that NODE_OPTIONS refuses, e.g. `--trace-gc`
 * when a benchmark's tail latency needs explaining.
 */
export function spawnBerth(args: string[], env: NodeJS.ProcessEnv = process.env): Spawned {
  const flags = env.BERTH_NODE_FLAGS?.split(' ').filter(Boolean) ?? [];
  // BERTH_FROM_DIST=1: the built CLI (`npm run build`), the form the image runs, e.g. for a benchmark.
  const entry =
    env.BERTH_FROM_DIST === '1' ? join(ROOT, 'dist', 'cmd', 'berth.js') : join(ROOT, 'cmd', 'berth.ts');
  return spawnProcess(process.execPath, [...flags, entry, ...args], {
    cwd: ROOT,
    env,
  });
}

/** Any command, output captured as spawnBerth does (e.g. `node dist/cmd/berth.js` of the image). */
export function spawnProcess(
  command: string,
  argv: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv },
): Spawned {
  const proc = spawn(command, argv, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const listeners = new Set<() => void>();
  const onData = (d: Buffer) => {
    out += d.toString();
    for (const l of listeners) l();
  };
  proc.stdout?.on('data', onData);
  proc.stderr?.on('data', onData);
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  return {
    proc,
    output: () => out,
    exited,
    waitForLine(re, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const line = out.split('\n').find((l) => re.test(l));
          if (line !== undefined) {
            cleanup();
            resolve(line);
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`no line matching ${re} within ${timeoutMs} ms; output:\n${out}`));
        }, timeoutMs);
        const onExit = () => {
          cleanup();
          reject(new Error(`process exited before a line matching ${re}; output:\n${out}`));
        };
        const cleanup = () => {
          clearTimeout(timer);
          listeners.delete(check);
          proc.off('exit', onExit);
        };
        listeners.add(check);
        proc.once('exit', onExit);
        check();
      });
    },
  };
}

/** Pids of live processes whose command line contains `needle` (reads /proc). */
export function processesMentioning(needle: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (cmd.includes(needle)) pids.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return pids;
}
