/**
 * Pieces shared by the benchmarks that run a whole platform (`berth up`, control plane, fake model)
 * and charge CPU per process: the fake model as its own process, process lookup and CPU from /proc.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { ControlPlane } from '../../pkg/kube/controlplane/index.ts';
import { processesMentioning } from '../support/process.ts';

/** Percentile of an ascending list (nearest rank). */
export const pct = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;

/** CPU seconds (user + system) a process has used, from /proc (clock ticks of 10 ms). */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** The fake model server in its own process; its CA is written to `caFile` for NODE_EXTRA_CA_CERTS. */
export async function startFakeModelProcess(
  caFile: string,
  /** Scripts by model name (test/fixtures/fake-model-process.ts, FAKE_MODEL_SCRIPTS). */
  scripts: Record<string, unknown> = {},
): Promise<{ url: string; ca: string; proc: ChildProcess }> {
  const proc = spawn(process.execPath, [join(import.meta.dirname, '../fixtures/fake-model-process.ts')], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, FAKE_MODEL_SCRIPTS: JSON.stringify(scripts) },
  });
  const lines = createInterface({ input: proc.stdout as NodeJS.ReadableStream });
  const [line] = (await once(lines, 'line')) as [string];
  const fake = JSON.parse(line) as { url: string; ca: string };
  writeFileSync(caFile, fake.ca);
  return { ...fake, proc };
}

/** Pids of every process a platform benchmark charges CPU to, by name. */
export function platformPids(cp: ControlPlane, upPid: number, fakePid: number): Record<string, number> {
  const port = new URL(cp.server).port;
  const only = (needle: string, bin: string) =>
    processesMentioning(needle).find((pid) =>
      readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0]?.endsWith(bin),
    ) as number;
  return {
    'berth up': upPid,
    'kube-apiserver': only(`--secure-port ${port}`, 'kube-apiserver'),
    etcd: only(cp.stateDir, 'etcd'),
    'fake model': fakePid,
    'bench client': process.pid,
  };
}
