import type { ObjectLike } from '../kube/client/types.ts';
import type { KubeStatus } from '../kube/errors.ts';
import type { KindRef } from '../kube/kinds.ts';
import type { GatewayDeps } from './deps.ts';

/**
 * Whether the client answers reads of `ref` in `namespace` from the informer cache (every namespace
 * in `berth up`, the instance's own in `berth api`). Elsewhere it reads live with the service's
 * identity, so RBAC, not an empty cache, decides what a caller sees there.
 */
export function cached(deps: GatewayDeps, ref: KindRef<unknown>, namespace: string): boolean {
  return deps.cache.serves(ref, namespace);
}

/**
 * Read-your-writes: waits (briefly) until the cache has seen what was just written — the new
 * version, or the object's disappearance after a DELETE that needed no finalizer. The write has
 * succeeded either way, so a slow cache is logged, not turned into an error for the client.
 */
export async function settle(
  deps: GatewayDeps,
  ref: KindRef<unknown>,
  namespace: string,
  obj: ObjectLike | KubeStatus,
  opts: { deleted?: boolean; name?: string } = {},
): Promise<void> {
  if (!cached(deps, ref, namespace)) return;
  // A DELETE may answer with a Status rather than the object: the caller names it then.
  const meta = 'metadata' in obj ? obj.metadata : undefined;
  const name = opts.name ?? meta?.name ?? '';
  // A DELETE that leaves finalizers only sets deletionTimestamp: the object stays, newer.
  const gone = opts.deleted && !(meta?.deletionTimestamp && meta.finalizers?.length);
  try {
    await deps.cache.waitForVersion(ref, namespace, name, meta?.resourceVersion, {
      deleted: gone,
      timeoutMs: 2000,
    });
  } catch (err) {
    deps.logger.warn({ err, kind: ref.kind, namespace, name }, 'cache did not show the write within 2 s');
  }
}
