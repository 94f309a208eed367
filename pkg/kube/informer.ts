import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { KubeError } from './errors.ts';
import { rawRequest } from './raw.ts';
import { type WatchEvent, watchStream } from './watch.ts';

export interface InformerHandlers<T> {
  onAdd?(obj: T): void;
  onUpdate?(oldObj: T, obj: T): void;
  onDelete?(obj: T): void;
}

export interface InformerOptions<T extends KubernetesObject> {
  kc: KubeConfig;
  /** Collection path: `/apis/berth.dev/v1alpha1/queries`, `/api/v1/namespaces/x/configmaps`, … */
  path: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** LIST page size; pages keep the API server's and our memory peaks small. Default 500. */
  pageSize?: number;
  /** Server-side watch timeout; default random 300–600 s so informers do not reconnect in lockstep. */
  watchTimeoutSeconds?: () => number;
  /**
   * Applied to every object before it is stored. Default: drop `metadata.managedFields`, which is
   * often half of an object's size and which no reader of the cache needs.
   */
  transform?: (obj: T) => T;
}

type ObjectMap<T> = Map<string, Map<string, T>>;

export const stripManagedFields = <T extends KubernetesObject>(obj: T): T => {
  if (obj.metadata?.managedFields) delete obj.metadata.managedFields;
  return obj;
};

interface ListPage<T> {
  kind?: string;
  apiVersion?: string;
  metadata?: { resourceVersion?: string; continue?: string };
  items?: T[];
}

/** Ended the current watch to relist, not a failure. */
class RelistRequested extends Error {}

/**
 * One list+watch loop over a collection with an in-memory store, like client-go's reflector. It
 * RETURNS only when its signal aborts and THROWS on any failure other than 410 Gone (which relists):
 * restarting it with backoff is the supervisor's job, as with client-node's informer. A restart
 * resumes the watch from the last resource version, so nothing is relisted unless needed.
 */
export class Informer<T extends KubernetesObject = KubernetesObject> {
  readonly path: string;
  private readonly opts: InformerOptions<T>;
  private store: ObjectMap<T> = new Map();
  private readonly handlers = new Set<InformerHandlers<T>>();
  private resourceVersion = '';
  private relistRequested = false;
  private current: AbortController | undefined;
  private syncedOnce = false;
  private readonly syncWaiters = new Set<() => void>();
  /** Epoch ms of the last list, watch event or bookmark: the "last event" the health reports. */
  lastEventAt = 0;
  /** Epoch ms of the last sign of life of the API server: an event or a watch being (re)established. */
  lastContactAt = 0;
  lastListAt = 0;
  lists = 0;
  private count = 0;

  constructor(opts: InformerOptions<T>) {
    this.opts = opts;
    this.path = opts.path;
  }

  get synced(): boolean {
    return this.syncedOnce;
  }

  get size(): number {
    return this.count;
  }

  get latestResourceVersion(): string {
    return this.resourceVersion;
  }

  /** Resolves after the first complete list. */
  waitForSync(): Promise<void> {
    if (this.syncedOnce) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.add(resolve));
  }

  addHandlers(h: InformerHandlers<T>): () => void {
    this.handlers.add(h);
    return () => this.handlers.delete(h);
  }

  get(namespace: string | undefined, name: string): T | undefined {
    return this.store.get(namespace ?? '')?.get(name);
  }

  /** Objects of one namespace, or of all when `namespace` is undefined. */
  list(namespace?: string): T[] {
    if (namespace !== undefined) return [...(this.store.get(namespace)?.values() ?? [])];
    const out: T[] = [];
    for (const ns of this.store.values()) for (const o of ns.values()) out.push(o);
    return out;
  }

  /** Makes the running loop drop its watch and relist (watchdog, periodic resync). */
  relist(): void {
    this.relistRequested = true;
    this.current?.abort(new RelistRequested('relist requested'));
  }

  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const ctl = new AbortController();
      this.current = ctl;
      // Not AbortSignal.any([signal, ctl.signal]): Node keeps each such composite in the long-lived
      // run signal's dependants for good (nodejs/node#64476) — one per watch, for the process's life.
      const stop = () => ctl.abort(signal.reason);
      signal.addEventListener('abort', stop, { once: true });
      const linked = ctl.signal;
      try {
        if (!this.resourceVersion || this.relistRequested) {
          this.relistRequested = false;
          await this.listAll(linked);
        }
        await this.watchOnce(linked);
      } catch (err) {
        if (signal.aborted) return;
        if (ctl.signal.aborted && ctl.signal.reason instanceof RelistRequested) continue;
        if (err instanceof KubeError && err.reason === 'Gone') {
          this.resourceVersion = '';
          continue;
        }
        throw err;
      } finally {
        signal.removeEventListener('abort', stop);
        this.current = undefined;
      }
    }
  }

  private query(extra: Record<string, string>): string {
    const q = new URLSearchParams(extra);
    if (this.opts.labelSelector) q.set('labelSelector', this.opts.labelSelector);
    if (this.opts.fieldSelector) q.set('fieldSelector', this.opts.fieldSelector);
    return `${this.path}?${q}`;
  }

  private async listAll(signal: AbortSignal): Promise<void> {
    const fresh: ObjectMap<T> = new Map();
    let cont = '';
    let rv = '';
    do {
      const params: Record<string, string> = { limit: String(this.opts.pageSize ?? 500) };
      if (cont) params.continue = cont;
      const res = await rawRequest(this.opts.kc, { path: this.query(params), signal });
      if (res.status !== 200) throw KubeError.fromResponse(res.status, res.body, `list ${this.path}`);
      const page = res.json<ListPage<T>>();
      const kind = page.kind?.replace(/List$/, '');
      for (const item of page.items ?? []) {
        // Items of a LIST carry no kind/apiVersion for built-in types; readers expect whole objects.
        item.kind ??= kind;
        item.apiVersion ??= page.apiVersion;
        const obj = this.transform(item);
        const ns = obj.metadata?.namespace ?? '';
        const m = fresh.get(ns) ?? new Map<string, T>();
        fresh.set(ns, m);
        m.set(obj.metadata?.name ?? '', obj);
      }
      cont = page.metadata?.continue ?? '';
      rv = page.metadata?.resourceVersion ?? rv;
    } while (cont);
    this.replace(fresh);
    this.resourceVersion = rv;
    this.lastEventAt = this.lastContactAt = this.lastListAt = Date.now();
    this.lists++;
    if (!this.syncedOnce) {
      this.syncedOnce = true;
      for (const w of this.syncWaiters) w();
      this.syncWaiters.clear();
    }
  }

  private async watchOnce(signal: AbortSignal): Promise<void> {
    const timeout = this.opts.watchTimeoutSeconds?.() ?? Math.floor(300 + Math.random() * 300);
    const path = this.query({
      watch: '1',
      resourceVersion: this.resourceVersion,
      allowWatchBookmarks: 'true',
      timeoutSeconds: String(timeout),
    });
    await watchStream(
      this.opts.kc,
      path,
      signal,
      (ev) => this.onWatchEvent(ev as WatchEvent<T>),
      () => {
        this.lastContactAt = Date.now();
      },
    );
  }

  private onWatchEvent(ev: WatchEvent<T>): void {
    this.lastEventAt = this.lastContactAt = Date.now();
    if (ev.type === 'ERROR') {
      const status = ev.object as unknown as { code?: number };
      throw KubeError.fromResponse(status.code ?? 500, ev.object, `watch ${this.path}`);
    }
    const rv = ev.object.metadata?.resourceVersion;
    if (ev.type === 'BOOKMARK') {
      if (rv) this.resourceVersion = rv;
      return;
    }
    const obj = this.transform(ev.object);
    if (ev.type === 'DELETED') this.remove(obj);
    else this.upsert(obj);
    if (rv) this.resourceVersion = rv;
  }

  private transform(obj: T): T {
    return (this.opts.transform ?? stripManagedFields)(obj);
  }

  private upsert(obj: T): void {
    const ns = obj.metadata?.namespace ?? '';
    const name = obj.metadata?.name ?? '';
    const m = this.store.get(ns) ?? new Map<string, T>();
    this.store.set(ns, m);
    const old = m.get(name);
    m.set(name, obj);
    if (!old) {
      this.count++;
      this.emit((h) => h.onAdd?.(obj));
    } else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion) {
      this.emit((h) => h.onUpdate?.(old, obj));
    }
  }

  private remove(obj: T): void {
    const ns = obj.metadata?.namespace ?? '';
    const m = this.store.get(ns);
    const name = obj.metadata?.name ?? '';
    const old = m?.get(name);
    if (!m || !old) return;
    m.delete(name);
    if (m.size === 0) this.store.delete(ns);
    this.count--;
    this.emit((h) => h.onDelete?.(obj));
  }

  /** Swaps in a fresh list, emitting the adds, updates and deletes that the watch missed. */
  private replace(fresh: ObjectMap<T>): void {
    const old = this.store;
    for (const [ns, objs] of old) {
      const next = fresh.get(ns);
      for (const [name, obj] of objs) if (!next?.has(name)) this.remove(obj);
    }
    for (const objs of fresh.values()) for (const obj of objs.values()) this.upsert(obj);
  }

  private emit(fn: (h: InformerHandlers<T>) => void): void {
    for (const h of this.handlers) {
      try {
        fn(h);
      } catch {
        // A handler bug must not break the store; handlers only enqueue keys and wake waiters.
      }
    }
  }
}
