import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { inject } from 'vitest';

const run = promisify(execFile);

export function kubeConfig(user: 'admin' | 'gateway' | 'controller' = 'admin'): KubeConfig {
  return kubeConfigAt(inject('kubeconfig'), user === 'admin' ? undefined : `berth-local-${user}`);
}

/** A kubeconfig file (e.g. a test's own control plane's), in `context` when given. */
export function kubeConfigAt(path: string, context?: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  if (context) kc.setCurrentContext(context);
  return kc;
}

/**
 * A fresh namespace for one test file. No controller-manager runs, so namespaces are never
 * waited on for deletion; each file creates its own and leaves it behind.
 */
export async function createNamespace(prefix: string): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .slice(0, 63);
  await kubeConfig()
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name } } });
  return name;
}

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the real kubectl (built with the control plane) against the test cluster. */
export async function kubectl(args: string[], input?: string): Promise<KubectlResult> {
  const child = run(inject('kubectl'), ['--kubeconfig', inject('kubeconfig'), ...args], {
    maxBuffer: 32 * 1024 * 1024,
  });
  if (input !== undefined) {
    child.child.stdin?.end(input);
  }
  try {
    const { stdout, stderr } = await child;
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}
