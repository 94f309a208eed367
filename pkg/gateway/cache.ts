import type { KubernetesObject } from '@kubernetes/client-node';

/**
 * What the API service reads: the informer caches it shares with the controller (`berth up`) or
 * runs itself (`berth api`). Keyed by resource plural (`agents`, `secrets`, …).
 */
export interface ObjectCache {
  /** Objects of a resource in a namespace, or undefined when the resource is not cached. */
  list(plural: string, namespace: string): KubernetesObject[] | undefined;
  get(plural: string, namespace: string, name: string): KubernetesObject | undefined;
  /**
   * Resolves once the cache has seen the object at least at `resourceVersion` (or its deletion when
   * `deleted`), so a client that writes and then reads sees its own write. Gives up after `timeoutMs`.
   */
  waitForVersion?(
    plural: string,
    namespace: string,
    name: string,
    resourceVersion: string | undefined,
    opts?: { deleted?: boolean; timeoutMs?: number },
  ): Promise<void>;

  /**
   * Resolves with the object once `predicate` holds for it, driven by the informer's watch events
   * (never by polling). Rejects on timeout or when `signal` aborts.
   */
  waitFor(
    plural: string,
    namespace: string,
    name: string,
    predicate: (obj: KubernetesObject | undefined) => boolean,
    opts: { timeoutMs: number; signal?: AbortSignal },
  ): Promise<KubernetesObject | undefined>;
}
