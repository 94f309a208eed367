import type { V1ConfigMap } from '@kubernetes/client-node';
import { MARKETPLACE_SOURCES_CONFIGMAP } from '../../api/index.ts';
import { isConflict, isNotFound } from '../../kube/client/helpers.ts';
import type { Client } from '../../kube/client/types.ts';
import { KubeError } from '../../kube/errors.ts';
import { CoreKinds, type KindRef } from '../../kube/kinds.ts';
import { fieldManagerFor } from './names.ts';
import { type StoredSource, storedSourceSchema } from './schemas.ts';

const CONFIGMAP = CoreKinds.ConfigMap as KindRef<V1ConfigMap>;

/** The namespace's `marketplace-sources` ConfigMap as one caller sees it. */
export interface SourceMap {
  exists: boolean;
  resourceVersion?: string;
  data: Record<string, string>;
}

export type Decoded = { name: string; source: StoredSource } | { name: string; problem: string };

/** Reads the map as `client` (the user): absent is an empty map, a refusal propagates (403). */
export async function readMap(client: Client, namespace: string, signal?: AbortSignal): Promise<SourceMap> {
  try {
    const cm = await client.get(CONFIGMAP, { namespace, name: MARKETPLACE_SOURCES_CONFIGMAP }, { signal });
    return { exists: true, resourceVersion: cm.metadata?.resourceVersion, data: ownKeys(cm.data) };
  } catch (err) {
    if (isNotFound(err)) return { exists: false, data: ownKeys(undefined) };
    throw err;
  }
}

/**
 * The map's keys on an object without a prototype: source names come from users, and `constructor`
 * or `__proto__` looked up on a plain object would find Object.prototype's members (a source named
 * `constructor` was "already there" before it was created).
 */
function ownKeys(data: Record<string, string> | undefined): Record<string, string> {
  return Object.assign(Object.create(null) as Record<string, string>, data);
}

/** One key's value: a source, or why it is not one (a hand edit, a seed written by someone else). */
export function decode(name: string, raw: string): Decoded {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { name, problem: 'the value is not JSON' };
  }
  const parsed = storedSourceSchema.safeParse(value);
  if (!parsed.success)
    return { name, problem: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') };
  return { name, source: parsed.data };
}

/** Every key of the map, decoded, in name order. */
export const decodeAll = (map: SourceMap): Decoded[] =>
  Object.keys(map.data)
    .sort()
    .map((name) => decode(name, map.data[name] as string));

/** The sources map as an apply configuration: only the metadata and keys given. */
const sourcesMap = (namespace: string, metadata: object, data?: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: MARKETPLACE_SOURCES_CONFIGMAP, namespace, ...metadata },
  ...(data ? { data } : {}),
});

/**
 * Writes one key by server-side apply under the source's own field manager: the applied object
 * holds that key only, so other sources' keys (other managers, the seeder) are never touched. With
 * `resourceVersion`, the apply is conditional (409 when the map changed since it was read), which
 * callers use to re-check "exists / absent" before retrying.
 */
export function applySource(
  client: Client,
  namespace: string,
  name: string,
  source: StoredSource,
  resourceVersion?: string,
): Promise<V1ConfigMap> {
  const value = JSON.stringify({
    url: source.url,
    ...(source.displayName ? { displayName: source.displayName } : {}),
    ...(source.auth ? { auth: source.auth } : {}),
  });
  const cm = sourcesMap(namespace, resourceVersion ? { resourceVersion } : {}, { [name]: value });
  // force: an edit through the API takes the key over from whoever set it before (the seeder,
  // whose own applies then leave that key alone).
  return client.apply(CONFIGMAP, cm, { fieldManager: fieldManagerFor(name), force: true });
}

const pointer = (key: string) => `/data/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;

/**
 * Removes one key with a JSON Patch `remove` of that key alone. Apply can only drop a field its
 * manager owns by itself, and a seeded key belongs to the seeder; a targeted remove touches no
 * other key whoever owns them. A key already gone answers 404.
 */
export async function removeSource(client: Client, namespace: string, name: string): Promise<void> {
  const key = { namespace, name: MARKETPLACE_SOURCES_CONFIGMAP };
  try {
    await client.patch(CONFIGMAP, key, { type: 'json', patch: [{ op: 'remove', path: pointer(name) }] });
  } catch (err) {
    // The API server answers 422 for a remove of a path that is not there.
    if (err instanceof KubeError && err.reason === 'Invalid')
      throw new KubeError(404, 'NotFound', `marketplace source "${name}" not found`);
    throw err;
  }
}

/**
 * Creates the empty map with the API's own identity (rule 8 gives editors no `create` on
 * ConfigMaps). Callers have already asked whether the user may `patch` it. By server-side apply,
 * not POST: an apply that creates is authorized as `create` OF THIS NAME, so the API's Role grants
 * create on `marketplace-sources` only (a POST create cannot be restricted by name). A map created
 * meanwhile by someone else is as good; it only gains the label when no one else owns it.
 */
export async function createEmptyMap(own: Client, namespace: string): Promise<void> {
  const cm = sourcesMap(namespace, { labels: { 'app.kubernetes.io/managed-by': 'berth' } });
  try {
    await own.apply(CONFIGMAP, cm, { fieldManager: 'berth-api', force: false });
  } catch (err) {
    if (!isConflict(err)) throw err;
  }
}

/**
 * Runs a read-check-write step until its conditional write lands: a 409 means the map changed
 * between the read and the write (another source was edited), so the step reads again. Each round
 * of a burst lets one writer through, so N concurrent writers need at most N attempts; past the
 * bound the 409 reaches the client, who may retry.
 */
export async function withRetry<T>(step: () => Promise<T>, attempts = 10): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await step();
    } catch (err) {
      if (!isConflict(err) || i >= attempts) throw err;
    }
  }
}
