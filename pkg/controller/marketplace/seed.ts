import type { KubeConfig, V1ConfigMap } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { applyObject } from '../../kube/apply.ts';
import { MARKETPLACE_SOURCES_CONFIGMAP } from '../../kube/cache.ts';
import type { Discovery } from '../../kube/discovery.ts';
import { KubeError } from '../../kube/errors.ts';
import { rawRequest } from '../../kube/raw.ts';

export const SEEDER_FIELD_MANAGER = 'helm-marketplace-seeder';

const httpsUrl = z.string().refine(
  (v) => {
    try {
      return new URL(v).protocol === 'https:';
    } catch {
      return false;
    }
  },
  { message: 'must be an absolute https URL' },
);

/** One chart `marketplaceSources` entry (spec: name, url, displayName?, namespace?, auth?). */
export const seedEntrySchema = z.object({
  name: z
    .string()
    .min(1)
    .max(253)
    .regex(/^[-._a-zA-Z0-9]+$/, 'must be a ConfigMap key: alphanumerics, -, _ and .'),
  url: httpsUrl,
  displayName: z.string().optional(),
  namespace: z.string().min(1).optional(),
  auth: z.object({ scheme: z.enum(['bearer', 'basic']), secretRef: z.string().min(1) }).optional(),
});
export type SeedEntry = z.infer<typeof seedEntrySchema>;

export interface ParsedSeed {
  entries: SeedEntry[];
  /** Entries rejected by validation, each with its index and reason. */
  errors: string[];
}

/** Parses a seed list (YAML or JSON): a list, or an object holding it under `marketplaceSources`. */
export function parseSeed(text: string, source: string): ParsedSeed {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new Error(`marketplace seed ${source}: not YAML/JSON: ${(err as Error).message}`);
  }
  const list = Array.isArray(doc)
    ? doc
    : (doc as { marketplaceSources?: unknown } | null)?.marketplaceSources;
  if (doc == null || list == null) return { entries: [], errors: [] };
  if (!Array.isArray(list)) throw new Error(`marketplace seed ${source}: expected a list of sources`);
  const entries: SeedEntry[] = [];
  const errors: string[] = [];
  list.forEach((item, i) => {
    const r = seedEntrySchema.safeParse(item);
    if (r.success) entries.push(r.data);
    else
      errors.push(
        `${source}[${i}]: ${r.error.issues.map((x) => `${x.path.join('.') || 'entry'} ${x.message}`).join('; ')}`,
      );
  });
  return { entries, errors };
}

export interface SeedResult {
  namespace: string;
  name: string;
  result: 'applied' | 'skipped';
  /** For skipped keys: the field managers that changed the key. */
  ownedBy?: string[];
}

interface ManagedFieldsEntry {
  manager?: string;
  fieldsV1?: { 'f:data'?: Record<string, unknown> };
}

/** Keys of `data` and which field managers own each. */
function keyOwners(cm: V1ConfigMap | undefined): Map<string, string[]> {
  const owners = new Map<string, string[]>();
  for (const mf of (cm?.metadata?.managedFields ?? []) as ManagedFieldsEntry[]) {
    for (const f of Object.keys(mf.fieldsV1?.['f:data'] ?? {})) {
      if (!f.startsWith('f:')) continue;
      const key = f.slice(2);
      owners.set(key, [...(owners.get(key) ?? []), mf.manager ?? 'unknown']);
    }
  }
  return owners;
}

export function sourceValue(e: SeedEntry): string {
  return JSON.stringify({
    url: e.url,
    ...(e.displayName ? { displayName: e.displayName } : {}),
    ...(e.auth ? { auth: e.auth } : {}),
  });
}

async function seedNamespace(
  kc: KubeConfig,
  ns: string,
  entries: SeedEntry[],
  discovery?: Discovery,
): Promise<SeedResult[]> {
  const path = `/api/v1/namespaces/${encodeURIComponent(ns)}/configmaps/${MARKETPLACE_SOURCES_CONFIGMAP}`;
  const got = await rawRequest(kc, { path });
  if (got.status !== 200 && got.status !== 404)
    throw KubeError.fromResponse(got.status, got.body, `get ${path}`);
  const owners = keyOwners(got.status === 200 ? got.json<V1ConfigMap>() : undefined);
  const results: SeedResult[] = [];
  const data: Record<string, string> = {};
  for (const e of entries) {
    const others = (owners.get(e.name) ?? []).filter((m) => m !== SEEDER_FIELD_MANAGER);
    if (others.length) results.push({ namespace: ns, name: e.name, result: 'skipped', ownedBy: others });
    else {
      data[e.name] = sourceValue(e);
      results.push({ namespace: ns, name: e.name, result: 'applied' });
    }
  }
  if (Object.keys(data).length === 0) return results;
  // force=false: should another manager take a key between our read and this apply, the API server
  // answers 409 instead of overwriting it, and the caller retries with a fresh read.
  await applyObject(
    kc,
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: MARKETPLACE_SOURCES_CONFIGMAP, namespace: ns },
      data,
    } as V1ConfigMap,
    { fieldManager: SEEDER_FIELD_MANAGER, force: false, discovery },
  );
  return results;
}

/**
 * Applies each entry as one key of its namespace's `marketplace-sources` ConfigMap by server-side
 * apply under the field manager `helm-marketplace-seeder`. Keys another manager has changed are
 * left alone; an empty list does nothing (an empty apply would delete every seeded key).
 */
export async function applySeed(
  kc: KubeConfig,
  entries: SeedEntry[],
  defaultNamespace: string,
  discovery?: Discovery,
): Promise<SeedResult[]> {
  if (entries.length === 0) return [];
  const byNs = new Map<string, SeedEntry[]>();
  for (const e of entries) {
    const ns = e.namespace ?? defaultNamespace;
    byNs.set(ns, [...(byNs.get(ns) ?? []), e]);
  }
  const results: SeedResult[] = [];
  for (const [ns, list] of byNs) {
    for (let attempt = 1; ; attempt++) {
      try {
        results.push(...(await seedNamespace(kc, ns, list, discovery)));
        break;
      } catch (err) {
        if (!(err instanceof KubeError && err.reason === 'Conflict') || attempt >= 3) throw err;
      }
    }
  }
  return results;
}
