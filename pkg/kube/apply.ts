import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { Discovery, resourcePath } from './discovery.ts';
import { KubeError } from './errors.ts';
import { rawRequest } from './raw.ts';

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
      .filter((o): o is KubernetesObject => !!o && typeof o === 'object' && !!o.kind),
  );
}

export interface ApplyOptions {
  fieldManager: string;
  /** Take ownership of fields other managers set (what controllers do); false reports conflicts. */
  force?: boolean;
  discovery?: Discovery;
}

/** Server-side apply of one object, sent as raw JSON so no field is lost to a typed serializer. */
export async function applyObject<T extends KubernetesObject>(
  kc: KubeConfig,
  obj: T,
  opts: ApplyOptions,
): Promise<T> {
  const discovery = opts.discovery ?? new Discovery(kc);
  const apiVersion = obj.apiVersion ?? 'v1';
  const info = await discovery.resource(apiVersion, obj.kind ?? '');
  if (!info) throw new KubeError(404, 'NotFound', `no resource of kind ${obj.kind} in ${apiVersion}`);
  const name = obj.metadata?.name;
  if (!name) throw new KubeError(422, 'Invalid', `cannot apply a ${obj.kind} without metadata.name`);
  const query = new URLSearchParams({ fieldManager: opts.fieldManager, force: String(opts.force ?? true) });
  const res = await rawRequest(kc, {
    method: 'PATCH',
    path: `${resourcePath(info, obj.metadata?.namespace ?? (info.namespaced ? 'default' : undefined), name)}?${query}`,
    body: obj,
    contentType: 'application/apply-patch+yaml',
  });
  if (res.status >= 300) throw KubeError.fromResponse(res.status, res.body, `apply ${obj.kind}/${name}`);
  return res.json<T>();
}

export async function applyObjects(
  kc: KubeConfig,
  objects: KubernetesObject[],
  opts: ApplyOptions,
): Promise<KubernetesObject[]> {
  const discovery = opts.discovery ?? new Discovery(kc);
  const out: KubernetesObject[] = [];
  for (const obj of objects) out.push(await applyObject(kc, obj, { ...opts, discovery }));
  return out;
}
