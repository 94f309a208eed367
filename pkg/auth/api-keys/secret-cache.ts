import { CoreV1Api, type KubeConfig, ListWatch, type V1Secret, Watch } from '@kubernetes/client-node';
import { API_KEY_SECRET_TYPE } from '../../api/group.ts';
import type { Logger } from '../../log/index.ts';

/**
 * Where API key Secrets are read from on the hot path: an informer cache, never the API server.
 * `get` is optional so any `{list()}` source (e.g. the controller's shared cache) plugs in; with
 * `get`, a lookup is O(1). Implementations should return only the instance namespace's Secrets;
 * the service checks the namespace again anyway.
 */
export interface SecretSource {
  list(): readonly V1Secret[];
  get?(name: string): V1Secret | undefined;
  /** Lets writers wait for their own write to show (read-your-writes); else they poll. */
  onChange?(listener: () => void): () => void;
}

export interface ApiKeySecretCacheOptions {
  kc: KubeConfig;
  namespace: string;
  logger?: Logger;
  /** Restart backoff after a failed list/watch (doubles up to 30 s). */
  initialBackoffMs?: number;
}

/**
 * Informer over the instance namespace's Secrets of type `berth.dev/api-key` only (field selector),
 * so other Secrets never enter the API service's memory. client-node's informer stops on errors
 * other than 410: this wrapper restarts it with backoff.
 */
export class ApiKeySecretCache implements SecretSource {
  readonly namespace: string;
  private readonly informer: ListWatch<V1Secret>;
  private readonly logger: Logger | undefined;
  private readonly listeners = new Set<() => void>();
  private readonly initialBackoffMs: number;
  private backoffMs: number;
  private stopped = false;
  private restartTimer: NodeJS.Timeout | undefined;
  private markSynced: () => void = () => {};
  private readonly synced: Promise<void>;

  constructor(opts: ApiKeySecretCacheOptions) {
    this.namespace = opts.namespace;
    this.logger = opts.logger;
    this.initialBackoffMs = opts.initialBackoffMs ?? 1000;
    this.backoffMs = this.initialBackoffMs;
    this.synced = new Promise<void>((resolve) => {
      this.markSynced = resolve;
    });
    const fieldSelector = `type=${API_KEY_SECRET_TYPE}`;
    const core = opts.kc.makeApiClient(CoreV1Api);
    const path = `/api/v1/namespaces/${encodeURIComponent(opts.namespace)}/secrets`;
    const list = async () => {
      const res = await core.listNamespacedSecret({ namespace: opts.namespace, fieldSelector });
      this.markSynced();
      this.backoffMs = this.initialBackoffMs;
      return res;
    };
    // makeInformer takes no field selector in client-node 2.0; ListWatch (what it builds) does.
    this.informer = new ListWatch(path, new Watch(opts.kc), list, false, undefined, fieldSelector);
    const notify = () => {
      for (const l of this.listeners) l();
    };
    this.informer.on('change', notify);
    this.informer.on('error', (err: unknown) => this.restart(err));
  }

  /** Starts the informer; resolves once the first list has landed (or rejects after `timeoutMs`). */
  async start(timeoutMs = 30_000): Promise<void> {
    this.stopped = false;
    await this.informer.start();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new Error(`API key cache of namespace ${this.namespace}: no initial list within ${timeoutMs} ms`),
          ),
        timeoutMs,
      );
    });
    try {
      await Promise.race([this.synced, timeout]);
    } catch (err) {
      // Do not leave a retrying informer behind a failed start.
      await this.stop();
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.restartTimer);
    await this.informer.stop();
  }

  get(name: string): V1Secret | undefined {
    return this.informer.get(name, this.namespace);
  }

  list(): readonly V1Secret[] {
    return this.informer.list(this.namespace);
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private restart(err: unknown): void {
    if (this.stopped) return;
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, 30_000);
    this.logger?.warn(
      { err, namespace: this.namespace, retryInMs: delay },
      'API key secret informer failed; restarting',
    );
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => {
      if (!this.stopped) void this.informer.start();
    }, delay);
    this.restartTimer.unref();
  }
}

/** Adapts a cache keyed by resource and namespace (the gateway's / controller's) to a SecretSource. */
export function secretSourceFrom(
  cache: {
    list(plural: string, namespace: string): readonly V1Secret[] | undefined;
    get?(plural: string, namespace: string, name: string): V1Secret | undefined;
  },
  namespace: string,
): SecretSource {
  const get = cache.get?.bind(cache);
  return {
    list: () => (cache.list('secrets', namespace) ?? []).filter((s) => s.type === API_KEY_SECRET_TYPE),
    ...(get ? { get: (name: string) => get('secrets', namespace, name) } : {}),
  };
}
