import { existsSync, mkdirSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type ImageConfig, normalizeReference, writeImageArchive } from '../oci-archive.ts';

export const PAUSE_IMAGE = 'berth-pause:dev';
export const COREDNS_IMAGE = 'berth-coredns:dev';

/**
 * A scratch image holding one static binary at `/<basename>`: the node's sandbox (pause) and
 * CoreDNS images. Archives are cached in `cacheDir` next to the binaries and rebuilt when the binary
 * is newer than its archive (the layers are deterministic, so a rebuild gives the same digest).
 */
export async function staticBinaryImage(
  name: string,
  binary: string,
  cacheDir: string,
  config: ImageConfig,
): Promise<{ file: string; ref: string }> {
  mkdirSync(cacheDir, { recursive: true });
  const file = join(cacheDir, `${name.replace(/[^a-z0-9.-]+/gi, '_')}.tar`);
  const ref = normalizeReference(name);
  if (existsSync(file) && statSync(file).mtimeMs >= statSync(binary).mtimeMs) return { file, ref };
  const base = binary.slice(binary.lastIndexOf('/') + 1);
  await writeImageArchive(
    {
      name,
      layers: [[{ path: base, type: 'file', mode: 0o755, uid: 0, gid: 0, source: realpathSync(binary) }]],
      history: [`static ${base} binary (pkg/kube/controlplane/node-images.ts)`],
      config: { Entrypoint: [`/${base}`], ...config },
    },
    file,
  );
  return { file, ref };
}

export function pauseImage(pause: string, cacheDir: string) {
  return staticBinaryImage(PAUSE_IMAGE, pause, cacheDir, { User: '65535:65535' });
}

export function corednsImage(coredns: string, cacheDir: string) {
  return staticBinaryImage(COREDNS_IMAGE, coredns, cacheDir, { User: '65532:65532' });
}
