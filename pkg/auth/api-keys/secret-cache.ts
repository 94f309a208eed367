import type { KubeConfig, V1Secret } from '@kubernetes/client-node';
import { API_KEY_SECRET_TYPE } from '../../api/group.ts';
import { InformerCache } from '../../kube/cache.ts';
import { CoreKinds } from '../../kube/kinds.ts';
import type { Logger } from '../../log/index.ts';

/**
 * Where API key Secrets are read from on the hot path: an informer cache, never the API server.
 * `get` is optional so any `{list()}` source plugs in (tests); with `get`, a lookup is O(1).
 * Implementations should return only the instance namespace's Secrets; the service checks the
 * namespace again anyway.
 */
export interface SecretSource {
  list(): readonly V1Secret[];
  get?(name: string): V1Secret | undefined;
  /** Lets writers wait for their own write to show (read-your-writes); else they poll. */
  onChange?(listener: () => void): () => void;
}

const isApiKeySecret = (s: V1Secret) => s.type === API_KEY_SECRET_TYPE;

/**
 * The API key Secrets of `namespace` in an informer cache that holds Secrets: the shared cache of
 * `berth api` / `berth up`, or the one `startApiKeyCache` starts.
 */
export function secretSourceFrom(cache: InformerCache, namespace: string): SecretSource {
  return cache.view<V1Secret>(CoreKinds.Secret, namespace, isApiKeySecret);
}

export interface ApiKeyCacheOptions {
  kc: KubeConfig;
  namespace: string;
  logger?: Logger;
  /** How long the first list may take before start-up fails (default 30 s). */
  timeoutMs?: number;
}

/**
 * An informer cache of only the API key Secrets of one namespace, for a process without the shared
 * cache. The field selector keeps every other Secret out of memory. Resolves once listed; a failed
 * start leaves no informer retrying behind it.
 */
export async function startApiKeyCache(opts: ApiKeyCacheOptions): Promise<InformerCache> {
  const cache = InformerCache.of({ kc: opts.kc, namespace: opts.namespace, logger: opts.logger }, [
    { ref: CoreKinds.Secret, fieldSelector: `type=${API_KEY_SECRET_TYPE}` },
  ]);
  cache.start();
  try {
    await cache.waitForSync(opts.timeoutMs ?? 30_000);
  } catch (err) {
    await cache.stop();
    throw err;
  }
  return cache;
}
