import type { InformerCache } from '../cache.ts';
import { KubeError } from '../errors.ts';
import type { KindRef } from '../kinds.ts';
import type {
  CallOptions,
  Client,
  Identity,
  ListOptions,
  ObjectKey,
  ObjectList,
  StatusWriter,
} from './types.ts';

/**
 * The process's client, as controller-runtime's default one: reads of kinds the shared informer
 * cache holds (in namespaces it watches) come from the cache, everything else and every write go
 * to the API server. Selectors and paging are answered live, so their semantics stay the server's.
 */
export class CachedClient implements Client {
  readonly #live: Client;
  readonly #cache: InformerCache;

  constructor(live: Client, cache: InformerCache) {
    this.#live = live;
    this.#cache = cache;
  }

  get scheme() {
    return this.#live.scheme;
  }

  /** The informer cache behind the reads (for waits on watch events and change handlers). */
  get cache(): InformerCache {
    return this.#cache;
  }

  async get<T>(ref: KindRef<T>, key: ObjectKey, opts?: CallOptions): Promise<T> {
    const ns = ref.namespaced ? (key.namespace ?? '') : '';
    if (!this.#cache.serves(ref, ref.namespaced ? ns : undefined)) return this.#live.get(ref, key, opts);
    const obj = this.#cache.get(ref, ns, key.name);
    if (obj === undefined) {
      const what = ref.group ? `${ref.plural}.${ref.group}` : ref.plural;
      throw new KubeError(404, 'NotFound', `${what} "${key.name}" not found`, {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        message: `${what} "${key.name}" not found`,
        reason: 'NotFound',
        details: { name: key.name, kind: ref.plural },
        code: 404,
      });
    }
    return obj;
  }

  async list<T>(ref: KindRef<T>, opts: ListOptions = {}): Promise<ObjectList<T>> {
    const live = opts.labelSelector || opts.fieldSelector || opts.limit || opts.continue;
    if (live || !this.#cache.serves(ref, opts.namespace)) return this.#live.list(ref, opts);
    const items =
      opts.namespace === undefined ? this.#cache.listAll(ref) : (this.#cache.list(ref, opts.namespace) ?? []);
    const rv = this.#cache.informer(ref).latestResourceVersion;
    return {
      apiVersion: ref.group ? `${ref.group}/${ref.version}` : ref.version,
      kind: `${ref.kind}List`,
      metadata: { resourceVersion: rv },
      items,
    };
  }

  create: Client['create'] = (ref, obj, opts) => this.#live.create(ref, obj, opts);
  replace: Client['replace'] = (ref, obj, opts) => this.#live.replace(ref, obj, opts);
  patch: Client['patch'] = (ref, key, patch, opts) => this.#live.patch(ref, key, patch, opts);
  delete: Client['delete'] = (ref, key, opts) => this.#live.delete(ref, key, opts);
  apply: Client['apply'] = (ref, obj, opts) => this.#live.apply(ref, obj, opts);
  resolve: Client['resolve'] = (apiVersion, kind) => this.#live.resolve(apiVersion, kind);

  status(): StatusWriter {
    return this.#live.status();
  }

  /** Impersonated reads go live: the cache holds what this process may see, not what the user may. */
  as(identity: Identity): Client {
    return this.#live.as(identity);
  }
}
