import type { KubernetesObject } from '@kubernetes/client-node';
import type { ApiResourceInfo } from '../kube/discovery.ts';
import type { GatewayDeps } from './deps.ts';

/**
 * Reads of the namespaced resource routes. The informer cache answers for the namespaces it
 * watches (all in `berth up`, the instance's own in `berth api`); any other namespace is read from
 * the API server with the service's identity, so its RBAC — not an empty cache — decides what a
 * caller sees there.
 */
export function cached(deps: GatewayDeps, plural: string, namespace: string): boolean {
  return deps.cache.list(plural, namespace) !== undefined;
}

export async function listObjects(
  deps: GatewayDeps,
  info: ApiResourceInfo,
  namespace: string,
): Promise<KubernetesObject[]> {
  const fromCache = deps.cache.list(info.plural, namespace);
  if (fromCache) return fromCache;
  return (await deps.writer.list(info, namespace)).items;
}

/** One object, or undefined when it does not exist (other API server failures throw). */
export async function getObject(
  deps: GatewayDeps,
  info: ApiResourceInfo,
  namespace: string,
  name: string,
): Promise<KubernetesObject | undefined> {
  if (cached(deps, info.plural, namespace)) return deps.cache.get(info.plural, namespace, name);
  try {
    return await deps.writer.get(info, namespace, name);
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

/**
 * Read-your-writes: waits (briefly) until the cache has seen what was just written — the new
 * version, or the object's disappearance after a DELETE that needed no finalizer. The write has
 * succeeded either way, so a slow cache is logged, not turned into an error for the client.
 */
export async function settle(
  deps: GatewayDeps,
  plural: string,
  namespace: string,
  obj: KubernetesObject,
  opts: { deleted?: boolean; name?: string } = {},
): Promise<void> {
  if (!deps.cache.waitForVersion || !cached(deps, plural, namespace)) return;
  // A DELETE may answer with a Status rather than the object: the caller names it then.
  const name = opts.name ?? obj.metadata?.name ?? '';
  // A DELETE that leaves finalizers only sets deletionTimestamp: the object stays, newer.
  const gone = opts.deleted && !(obj.metadata?.deletionTimestamp && obj.metadata.finalizers?.length);
  try {
    await deps.cache.waitForVersion(plural, namespace, name, obj.metadata?.resourceVersion, {
      deleted: gone,
      timeoutMs: 2000,
    });
  } catch (err) {
    deps.logger.warn({ err, plural, namespace, name }, 'cache did not show the write within 2 s');
  }
}
