/**
 * Restarting only the kube-apiserver of a control plane (etcd keeps running, so state and resource
 * versions survive), without touching pkg/kube/controlplane: the running binary's argv is read from
 * /proc, the process is killed, and the same command line is started again behind the same guard.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type GuardedChild, startGuarded } from '../../pkg/kube/controlplane/child.ts';
import { httpsGet, waitFor } from '../../pkg/kube/controlplane/https-probe.ts';
import type { ControlPlane } from '../../pkg/kube/controlplane/index.ts';
import { processesMentioning } from '../support/process.ts';

function apiserverProcess(cp: ControlPlane): { pid: number; argv: string[] } {
  for (const pid of processesMentioning(cp.stateDir)) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
      if (argv[0] === cp.binaries.kubeApiserver) return { pid, argv };
    } catch {
      // gone meanwhile
    }
  }
  throw new Error(`no kube-apiserver process of the control plane in ${cp.stateDir}`);
}

async function alive(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Kills kube-apiserver (SIGKILL) and returns a function that starts it again and waits for /readyz,
 * resolving with the new guarded child (the caller stops it before the control plane).
 */
export async function killApiServer(cp: ControlPlane): Promise<() => Promise<GuardedChild>> {
  const { pid, argv } = apiserverProcess(cp);
  process.kill(pid, 'SIGKILL');
  await waitFor('kube-apiserver to exit', 10_000, async () => ((await alive(pid)) ? undefined : true));
  return () => startAgain(cp, argv);
}

async function startAgain(cp: ControlPlane, argv: string[]): Promise<GuardedChild> {
  const child = startGuarded(
    'kube-apiserver',
    argv[0] as string,
    argv.slice(1),
    join(cp.stateDir, 'logs', 'kube-apiserver-restarted.log'),
  );
  await waitFor('restarted kube-apiserver /readyz', 90_000, async () => {
    const r = await httpsGet(`${cp.server}/readyz`, cp.caCert, cp.tokens.admin).catch(() => undefined);
    return r?.status === 200 ? true : undefined;
  });
  return child;
}
