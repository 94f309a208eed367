import type { V1ConfigMap } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { MARKETPLACE_SOURCES_CONFIGMAP } from '../../api/index.ts';
import type { Client } from '../../kube/client/index.ts';
import { KubeError } from '../../kube/errors.ts';
import { CoreKinds, type KindRef } from '../../kube/kinds.ts';

const ConfigMapRef = CoreKinds.ConfigMap as KindRef<V1ConfigMap>;

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

export function sourceValue(e: SeedEntry): string {
  return JSON.stringify({
    url: e.url,
    ...(e.displayName ? { displayName: e.displayName } : {}),
    ...(e.auth ? { auth: e.auth } : {}),
  });
}

/**
 * The `data` keys an apply conflicted on, with the managers owning each. The API server names them
 * in the 409's causes: `{reason: FieldManagerConflict, field: ".data.<key>", message: 'conflict
 * with "<manager>" …'}`.
 */
export function conflictingKeys(err: unknown): Map<string, string[]> {
  const owners = new Map<string, string[]>();
  if (!(err instanceof KubeError) || err.reason !== 'Conflict') return owners;
  for (const c of err.causes) {
    if (c.reason !== 'FieldManagerConflict' || !c.field?.startsWith('.data.')) continue;
    const key = c.field.slice('.data.'.length);
    const manager = /conflict with "([^"]+)"/.exec(c.message ?? '')?.[1] ?? 'unknown';
    owners.set(key, [...(owners.get(key) ?? []), manager]);
  }
  return owners;
}

function applyKeys(client: Client, namespace: string, data: Record<string, string>) {
  const cm = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: MARKETPLACE_SOURCES_CONFIGMAP, namespace },
    data,
  };
  // force=false: a key another manager changed is a 409 naming it, never overwritten. An apply
  // that creates the map is authorized as `patch` and as `create` of this name: the controller's
  // ClusterRole grants both on `marketplace-sources` only (test/install/rbac-semantics.test.ts).
  return client.apply(ConfigMapRef, cm, { fieldManager: SEEDER_FIELD_MANAGER, force: false });
}

/**
 * Applies the entries of one namespace; each key another manager owns comes back in the conflict
 * and is left out of the next attempt, until the rest applies (or nothing is left to apply: an
 * empty apply would delete every key the seeder owns).
 */
async function seedNamespace(client: Client, ns: string, entries: SeedEntry[]): Promise<SeedResult[]> {
  const skipped = new Map<string, string[]>();
  for (;;) {
    const rest = entries.filter((e) => !skipped.has(e.name));
    if (rest.length === 0) break;
    try {
      await applyKeys(client, ns, Object.fromEntries(rest.map((e) => [e.name, sourceValue(e)])));
      break;
    } catch (err) {
      const owned = [...conflictingKeys(err)].filter(([key]) => rest.some((e) => e.name === key));
      if (owned.length === 0) throw err;
      for (const [key, managers] of owned) skipped.set(key, managers);
    }
  }
  return entries.map((e) => {
    const ownedBy = skipped.get(e.name);
    return ownedBy
      ? { namespace: ns, name: e.name, result: 'skipped', ownedBy }
      : { namespace: ns, name: e.name, result: 'applied' };
  });
}

/**
 * Applies each entry as one key of its namespace's `marketplace-sources` ConfigMap by server-side
 * apply under the field manager `helm-marketplace-seeder`. Keys another manager has changed are
 * left alone; an empty list does nothing (an empty apply would delete every seeded key).
 */
export async function applySeed(
  client: Client,
  entries: SeedEntry[],
  defaultNamespace: string,
): Promise<SeedResult[]> {
  const byNs = new Map<string, SeedEntry[]>();
  for (const e of entries) {
    const ns = e.namespace ?? defaultNamespace;
    byNs.set(ns, [...(byNs.get(ns) ?? []), e]);
  }
  const results: SeedResult[] = [];
  for (const [ns, list] of byNs) results.push(...(await seedNamespace(client, ns, list)));
  return results;
}
