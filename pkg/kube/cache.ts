import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { ALL_KINDS } from '../api/index.ts';
import type { Logger } from '../log/index.ts';
import { resourcePath } from './discovery.ts';
import { Informer, type InformerHandlers } from './informer.ts';
import { resourceInfo } from './objects.ts';
import { type InformerHealth, SupervisedInformer, type SupervisorOptions } from './supervisor.ts';

export const MARKETPLACE_SOURCES_CONFIGMAP = 'marketplace-sources';

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
 * The shared informer cache registry: one supervised informer per resource (plural), read by the
 * controller's reconcilers, the engine's ResourceLookup and the API service. Implements the API
 * service's ObjectCache (list/get/waitFor/waitForVersion) structurally, so one process (`berth up`)
 * keeps ONE copy of every object.
 */
export class InformerCache {
  readonly namespace: string | undefined;
  private readonly o: InformerCacheOptions;
  private readonly informers = new Map<string, SupervisedInformer>();
  private readonly keyWatchers = new Map<string, Set<() => void>>();
  private started = false;

  constructor(opts: InformerCacheOptions) {
    this.o = opts;
    this.namespace = opts.namespace;
  }

  /** Adds a resource; informers registered after `start` start at once. Idempotent per plural. */
  register(plural: string, opts: CacheResourceOptions = {}): SupervisedInformer {
    const existing = this.informers.get(plural);
    if (existing) return existing;
    const info = resourceInfo(plural);
    const informer = new Informer({
      kc: this.o.kc,
      path: resourcePath(info, this.namespace),
      fieldSelector: opts.fieldSelector,
      labelSelector: opts.labelSelector,
      pageSize: this.o.pageSize,
      ...(opts.transform ? { transform: opts.transform } : {}),
    });
    informer.addHandlers({
      onAdd: (o) => this.notify(plural, o),
      onUpdate: (_, o) => this.notify(plural, o),
      onDelete: (o) => this.notify(plural, o),
    });
    const sup = new SupervisedInformer(plural, informer, { logger: this.o.logger, ...this.o.supervisor });
    this.informers.set(plural, sup);
    if (this.started) sup.start();
    return sup;
  }

  has(plural: string): boolean {
    return this.informers.has(plural);
  }

  informer(plural: string): Informer {
    const s = this.informers.get(plural);
    if (!s) throw new Error(`resource ${plural} is not cached`);
    return s.informer;
  }

  /** Subscribes to a cached resource's changes; returns the unsubscribe function. */
  onChange(plural: string, handlers: InformerHandlers<KubernetesObject>): () => void {
    return this.informer(plural).addHandlers(handlers);
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

  list(plural: string, namespace: string): KubernetesObject[] | undefined {
    const s = this.informers.get(plural);
    if (!s || !this.covers(namespace)) return undefined;
    return s.informer.list(namespace);
  }

  /** Objects of all watched namespaces. */
  listAll(plural: string): KubernetesObject[] {
    return this.informers.get(plural)?.informer.list() ?? [];
  }

  get(plural: string, namespace: string, name: string): KubernetesObject | undefined {
    return this.informers.get(plural)?.informer.get(namespace, name);
  }

  /** Resolves with the object once `predicate` holds, driven by watch events (no polling). */
  waitFor(
    plural: string,
    namespace: string,
    name: string,
    predicate: (obj: KubernetesObject | undefined) => boolean,
    opts: WaitOptions,
  ): Promise<KubernetesObject | undefined> {
    const key = `${plural}/${namespace}/${name}`;
    return new Promise((resolve, reject) => {
      const check = () => {
        const obj = this.get(plural, namespace, name);
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
    plural: string,
    namespace: string,
    name: string,
    resourceVersion: string | undefined,
    opts: { deleted?: boolean; timeoutMs?: number } = {},
  ): Promise<void> {
    await this.waitFor(
      plural,
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
    plural: string,
    namespace: string,
    filter: (obj: T) => boolean = () => true,
  ): { list(): T[]; get(name: string): T | undefined; onChange(listener: () => void): () => void } {
    const informer = this.informer(plural) as unknown as Informer<T>;
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

  private notify(plural: string, obj: KubernetesObject): void {
    const watchers = this.keyWatchers.get(`${plural}/${obj.metadata?.namespace ?? ''}/${obj.metadata?.name}`);
    if (watchers) for (const w of [...watchers]) w();
  }
}

/**
 * The cache every Berth process shares: all Berth kinds, Secrets (model and API keys), Services
 * (Memory service refs) and the `marketplace-sources` ConfigMaps only.
 */
export function createSharedCache(opts: InformerCacheOptions): InformerCache {
  const cache = new InformerCache(opts);
  for (const k of ALL_KINDS) cache.register(k.plural);
  cache.register('secrets');
  cache.register('services');
  cache.register('configmaps', { fieldSelector: `metadata.name=${MARKETPLACE_SOURCES_CONFIGMAP}` });
  return cache;
}
