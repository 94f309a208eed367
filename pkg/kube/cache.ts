import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from '../log/index.ts';
import { Informer, type InformerHandlers } from './informer.ts';
import { type KindRef, refKey, resourcePath } from './kinds.ts';
import { type InformerHealth, SupervisedInformer, type SupervisorOptions } from './supervisor.ts';

/** One resource to cache: its kind and what of it (selectors narrow what is listed and watched). */
export interface CachedResource extends CacheResourceOptions {
  ref: KindRef<unknown>;
}

export interface CacheResourceOptions {
  fieldSelector?: string;
  labelSelector?: string;
  transform?: (obj: KubernetesObject) => KubernetesObject;
}

export interface InformerCacheOptions {
  kc: KubeConfig;
  /** Watch only this namespace; all namespaces when absent. */
  namespace?: string;
  supervisor?: SupervisorOptions;
  pageSize?: number;
  logger?: Logger;
}

export interface WaitOptions {
  timeoutMs: number;
  signal?: AbortSignal;
}

/** Resource versions are opaque, but etcd's are integers: compare numerically when both are. */
export function versionAtLeast(have: string | undefined, want: string): boolean {
  if (have === undefined) return false;
  if (/^\d+$/.test(have) && /^\d+$/.test(want)) return BigInt(have) >= BigInt(want);
  return have === want;
}

/**
 * The shared informer cache registry: one supervised informer per kind, keyed by its KindRef, read
 * through the typed client's Reader by the controller's reconcilers, the engine's lookup and the
 * API service, so one process (`berth up`) keeps ONE copy of every object. Objects handed out are
 * the cache's own: readers must not mutate them.
 */
export class InformerCache {
  readonly namespace: string | undefined;
  private readonly o: InformerCacheOptions;
  private readonly informers = new Map<string, SupervisedInformer>();
  /** Kinds cached through a selector: the cache holds only part of them. */
  private readonly partial = new Set<string>();
  private readonly keyWatchers = new Map<string, Set<() => void>>();
  private started = false;

  constructor(opts: InformerCacheOptions) {
    this.o = opts;
    this.namespace = opts.namespace;
  }

  /** A cache of the given resources (what each process registers: see pkg/api's sharedResources). */
  static of(opts: InformerCacheOptions, resources: readonly CachedResource[]): InformerCache {
    const cache = new InformerCache(opts);
    for (const { ref, ...o } of resources) cache.register(ref, o);
    return cache;
  }

  /** Adds a resource; informers registered after `start` start at once. Idempotent per kind. */
  register(ref: KindRef<unknown>, opts: CacheResourceOptions = {}): SupervisedInformer {
    const key = refKey(ref);
    const existing = this.informers.get(key);
    if (existing) return existing;
    if (opts.fieldSelector || opts.labelSelector) this.partial.add(key);
    const informer = new Informer({
      kc: this.o.kc,
      path: resourcePath(ref, this.namespace),
      fieldSelector: opts.fieldSelector,
      labelSelector: opts.labelSelector,
      pageSize: this.o.pageSize,
      ...(opts.transform ? { transform: opts.transform } : {}),
    });
    informer.addHandlers({
      onAdd: (o) => this.notify(key, o),
      onUpdate: (_, o) => this.notify(key, o),
      onDelete: (o) => this.notify(key, o),
    });
    const sup = new SupervisedInformer(ref.plural, informer, { logger: this.o.logger, ...this.o.supervisor });
    this.informers.set(key, sup);
    if (this.started) sup.start();
    return sup;
  }

  has(ref: KindRef<unknown>): boolean {
    return this.informers.has(refKey(ref));
  }

  informer<T = KubernetesObject>(ref: KindRef<T>): Informer<T & KubernetesObject> {
    const s = this.informers.get(refKey(ref));
    if (!s) throw new Error(`resource ${refKey(ref)} is not cached`);
    return s.informer as unknown as Informer<T & KubernetesObject>;
  }

  /** Subscribes to a cached resource's changes; returns the unsubscribe function. */
  onChange<T>(ref: KindRef<T>, handlers: InformerHandlers<T & KubernetesObject>): () => void {
    return this.informer(ref).addHandlers(handlers);
  }

  start(): void {
    this.started = true;
    for (const s of this.informers.values()) s.start();
  }

  async stop(): Promise<void> {
    this.started = false;
    await Promise.all([...this.informers.values()].map((s) => s.stop()));
  }

  get synced(): boolean {
    return [...this.informers.values()].every((s) => s.informer.synced);
  }

  /** Resolves once every registered informer has listed once; rejects after `timeoutMs`. */
  async waitForSync(timeoutMs = 60_000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const pending = [...this.informers.values()].filter((s) => !s.informer.synced).map((s) => s.name);
        reject(new Error(`informer caches not synced within ${timeoutMs} ms: ${pending.join(', ')}`));
      }, timeoutMs);
    });
    try {
      await Promise.race([
        Promise.all([...this.informers.values()].map((s) => s.informer.waitForSync())),
        timeout,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  health(): InformerHealth[] {
    const now = Date.now();
    return [...this.informers.values()].map((s) => s.health(now));
  }

  /** Whether `namespace` is inside what this cache watches. */
  covers(namespace: string): boolean {
    return this.namespace === undefined || this.namespace === namespace;
  }

  /**
   * Whether reads of `ref` in `namespace` (all namespaces: undefined) can be served from here. Not
   * for a kind cached through a selector: a missing object there may well exist.
   */
  serves(ref: KindRef<unknown>, namespace: string | undefined): boolean {
    if (!this.has(ref) || this.partial.has(refKey(ref))) return false;
    return namespace === undefined ? this.namespace === undefined : this.covers(namespace);
  }

  /** Objects of one namespace; undefined when that namespace or kind is not cached. */
  list<T>(ref: KindRef<T>, namespace: string): T[] | undefined {
    const s = this.informers.get(refKey(ref));
    if (!s || !this.covers(namespace)) return undefined;
    return s.informer.list(namespace) as T[];
  }

  /** Objects of all watched namespaces. */
  listAll<T>(ref: KindRef<T>): T[] {
    return (this.informers.get(refKey(ref))?.informer.list() ?? []) as T[];
  }

  get<T>(ref: KindRef<T>, namespace: string, name: string): T | undefined {
    return this.informers.get(refKey(ref))?.informer.get(namespace, name) as T | undefined;
  }

  /** Resolves with the object once `predicate` holds, driven by watch events (no polling). */
  waitFor<T>(
    ref: KindRef<T>,
    namespace: string,
    name: string,
    predicate: (obj: T | undefined) => boolean,
    opts: WaitOptions,
  ): Promise<T | undefined> {
    const key = `${refKey(ref)}/${namespace}/${name}`;
    return new Promise((resolve, reject) => {
      const check = () => {
        const obj = this.get(ref, namespace, name);
        if (!predicate(obj)) return false;
        cleanup();
        resolve(obj);
        return true;
      };
      const onAbort = () => {
        cleanup();
        reject(opts.signal?.reason ?? new Error('aborted'));
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`timed out after ${opts.timeoutMs} ms waiting for ${key}`));
      }, opts.timeoutMs);
      const watchers = this.keyWatchers.get(key) ?? new Set();
      this.keyWatchers.set(key, watchers);
      const listener = () => void check();
      const cleanup = () => {
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        watchers.delete(listener);
        if (watchers.size === 0) this.keyWatchers.delete(key);
      };
      watchers.add(listener);
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      if (opts.signal?.aborted) onAbort();
      else check();
    });
  }

  /** Read-your-writes: resolves once the cache holds `resourceVersion` (or the deletion). */
  async waitForVersion(
    ref: KindRef<unknown>,
    namespace: string,
    name: string,
    resourceVersion: string | undefined,
    opts: { deleted?: boolean; timeoutMs?: number } = {},
  ): Promise<void> {
    await this.waitFor(
      ref as KindRef,
      namespace,
      name,
      (o) =>
        opts.deleted
          ? o === undefined
          : !resourceVersion || versionAtLeast(o?.metadata?.resourceVersion, resourceVersion),
      { timeoutMs: opts.timeoutMs ?? 10_000 },
    );
  }

  /**
   * A filtered read view of one resource in one namespace, e.g. the API key Secrets of the API
   * service's namespace (`{list, get, onChange}` is the shape pkg/auth's SecretSource takes).
   */
  view<T extends KubernetesObject = KubernetesObject>(
    ref: KindRef<T>,
    namespace: string,
    filter: (obj: T) => boolean = () => true,
  ): { list(): T[]; get(name: string): T | undefined; onChange(listener: () => void): () => void } {
    const informer = this.informer(ref) as Informer<T>;
    return {
      list: () => informer.list(namespace).filter(filter),
      get: (name) => {
        const o = informer.get(namespace, name);
        return o && filter(o) ? o : undefined;
      },
      onChange: (listener) => {
        const fire = (o: T) => {
          if (o.metadata?.namespace === namespace) listener();
        };
        return informer.addHandlers({ onAdd: fire, onUpdate: (_, o) => fire(o), onDelete: fire });
      },
    };
  }

  private notify(key: string, obj: KubernetesObject): void {
    const watchers = this.keyWatchers.get(`${key}/${obj.metadata?.namespace ?? ''}/${obj.metadata?.name}`);
    if (watchers) for (const w of [...watchers]) w();
  }
}
