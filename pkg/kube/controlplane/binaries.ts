import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The repository (or installed package) root: the first ancestor that holds hack/build-kube.sh. */
export function projectRoot(from = import.meta.dirname): string {
  let dir = from;
  for (;;) {
    if (existsSync(join(dir, 'hack', 'build-kube.sh'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cannot find hack/build-kube.sh above ${from}`);
    dir = parent;
  }
}

export interface KubeBinaries {
  dir: string;
  etcd: string;
  kubeApiserver: string;
  kubectl: string;
}

/**
 * Returns the cached etcd/kube-apiserver/kubectl, building them first when missing (the build
 * script is idempotent and prints the cache directory on its last line).
 */
export async function ensureKubeBinaries(opts: { onBuildStart?: () => void } = {}): Promise<KubeBinaries> {
  const script = join(projectRoot(), 'hack', 'build-kube.sh');
  opts.onBuildStart?.();
  const { stdout } = await run('bash', [script], { maxBuffer: 16 * 1024 * 1024, timeout: 60 * 60 * 1000 });
  const dir = stdout.trim().split('\n').pop() ?? '';
  if (!dir || !existsSync(join(dir, 'kube-apiserver'))) {
    throw new Error(`hack/build-kube.sh did not produce binaries (last line: ${JSON.stringify(dir)})`);
  }
  return {
    dir,
    etcd: join(dir, 'etcd'),
    kubeApiserver: join(dir, 'kube-apiserver'),
    kubectl: join(dir, 'kubectl'),
  };
}
