/**
 * A `berth broker` of one checkout, for the rows benchmark: `<root>/dist/cmd/berth.js` (built with
 * `npm run build`) with the manifests' `--max-semi-space-size=16`, on a free port, in a process of
 * its own so that its RSS is its own.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnProcess } from '../../../support/process.ts';

export interface BrokerProc {
  url: string;
  pid: number;
  rssMb(): number;
  stop(): Promise<void>;
}

export async function startBrokerAt(root: string, env: NodeJS.ProcessEnv = {}): Promise<BrokerProc> {
  const flags = (process.env.BERTH_NODE_FLAGS ?? '--max-semi-space-size=16').split(' ').filter(Boolean);
  const argv = [...flags, join(root, 'dist', 'cmd', 'berth.js'), 'broker', '--port', '0'];
  // BENCH_BROKER_CPUS (e.g. `1`): the broker on those CPUs only (taskset), to tell its own cost from
  // contention with the load generator.
  const cpus = process.env.BENCH_BROKER_CPUS;
  const proc = spawnProcess(
    cpus ? 'taskset' : process.execPath,
    cpus ? ['-c', cpus, process.execPath, ...argv] : argv,
    {
      cwd: root,
      env: { ...process.env, ...env, LOG_LEVEL: 'info' },
    },
  );
  const line = await proc.waitForLine(/"msg":"broker listening"/, 30_000);
  const url = `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`;
  const pid = proc.proc.pid as number;
  return {
    url,
    pid,
    rssMb: () =>
      Math.round(
        Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024,
      ),
    stop: async () => {
      proc.proc.kill('SIGTERM');
      await proc.exited;
    },
  };
}

/** RSS once the process has settled: polled until it stops falling for 2 s (at most 20 s). */
export async function settledRss(b: BrokerProc): Promise<number> {
  let last = b.rssMb();
  let since = performance.now();
  const end = performance.now() + 20_000;
  while (performance.now() < end && performance.now() - since < 2000) {
    await new Promise((r) => setTimeout(r, 250));
    const now = b.rssMb();
    if (now < last - 1) since = performance.now();
    last = Math.min(last, now);
  }
  return last;
}
