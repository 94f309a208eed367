import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import type { Client } from './client/types.ts';
import { KubeError } from './errors.ts';

/** All objects of the YAML files of a file or directory (sorted by name), skipping empty documents. */
export function readManifests(path: string): KubernetesObject[] {
  const files = statSync(path).isDirectory()
    ? readdirSync(path)
        .filter((f) => /\.ya?ml$/.test(f))
        .sort()
        .map((f) => join(path, f))
    : [path];
  return files.flatMap((f) =>
    parseAllDocuments(readFileSync(f, 'utf8'))
      .map((d) => d.toJSON() as KubernetesObject | null)
      .filter((o): o is KubernetesObject => !!o && typeof o === 'object' && !!o.kind)
      // A kustomization beside the manifests describes them; it is not an object of the cluster.
      .filter((o) => !o.apiVersion?.startsWith('kustomize.config.k8s.io/')),
  );
}

export interface ApplyManifestOptions {
  fieldManager: string;
  /** Take ownership of fields other managers set (what controllers do); false reports conflicts. */
  force?: boolean;
  /** Namespace of namespaced objects that name none. Default `default`. */
  namespace?: string;
}

/** Server-side apply of any object whose kind the scheme or discovery knows. */
export async function applyObject<T extends KubernetesObject>(
  client: Client,
  obj: T,
  opts: ApplyManifestOptions,
): Promise<T> {
  const apiVersion = obj.apiVersion ?? 'v1';
  const ref = await client.resolve(apiVersion, obj.kind ?? '');
  if (!ref) throw new KubeError(404, 'NotFound', `no resource of kind ${obj.kind} in ${apiVersion}`);
  if (!obj.metadata?.name)
    throw new KubeError(422, 'Invalid', `cannot apply a ${obj.kind} without metadata.name`);
  const namespace = ref.namespaced ? (obj.metadata.namespace ?? opts.namespace ?? 'default') : undefined;
  const placed = { ...obj, metadata: { ...obj.metadata, namespace } } as T;
  const applied = await client.apply(ref, placed, {
    fieldManager: opts.fieldManager,
    force: opts.force ?? true,
  });
  return applied as T;
}

export async function applyObjects(
  client: Client,
  objects: KubernetesObject[],
  opts: ApplyManifestOptions,
): Promise<KubernetesObject[]> {
  const out: KubernetesObject[] = [];
  for (const obj of objects) out.push(await applyObject(client, obj, opts));
  return out;
}
