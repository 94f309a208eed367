import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../log/index.ts';
import { type CachedResource, InformerCache } from './cache.ts';
import { createClient } from './client/index.ts';
import type { Client } from './client/types.ts';
import type { Scheme } from './kinds.ts';
import { LeaderElector } from './leader.ts';
import type { SupervisorOptions } from './supervisor.ts';

/** Something the manager starts and stops: a cache, a server, a controller. */
export interface Runnable {
  readonly name: string;
  /** true: runs only while this process holds the lease (controllers); false: always (caches, servers). */
  readonly needLeaderElection: boolean;
  start(): void | Promise<void>;
  stop(): void | Promise<void>;
  /**
   * A graceful stop (not a lost lease) calls this first, while the lease is still held: finish the
   * work in flight, start none, within the runnable's own bound.
   */
  drain?(): Promise<void>;
}

export interface LeaderElectionConfig {
  /** Namespace of the Lease; default the watched namespace, else `default`. */
  namespace?: string;
  name: string;
  /** Unique per process; default `<hostname>_<random>`. */
  identity?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
}

export interface ManagerOptions {
  kc: KubeConfig;
  scheme: Scheme;
  /** Watch only this namespace; all namespaces when absent. */
  namespace?: string;
  /** What the manager's own cache holds (ignored with `cache`). */
  resources?: readonly CachedResource[];
  /** A cache shared with the rest of the process: started and waited for here, stopped by its owner. */
  cache?: InformerCache;
  informers?: SupervisorOptions & { pageSize?: number };
  /** Instead of the client built on `kc` and the cache (tests: a FakeClient). */
  client?: Client;
  /** The built client's User-Agent, which the API server takes as its field manager's name. */
  userAgent?: string;
  /** false: leader runnables start at once (one process only). */
  leaderElection: LeaderElectionConfig | false;
  logger: Logger;
  syncTimeoutMs?: number;
}

/**
 * controller-runtime's Manager: owns the informer cache and the client built on it, starts its
 * runnables in the order they were added (those that need the lease once this process leads, again
 * at every new term) and stops them in reverse order, so controllers stop before the lease is
 * released and before the caches and servers they use go away.
 */
export class Manager {
  readonly cache: InformerCache;
  readonly client: Client;
  readonly identity: string;
  readonly #o: ManagerOptions;
  readonly #always: Runnable[] = [];
  readonly #leader: Runnable[] = [];
  readonly #started: Runnable[] = [];
  #elector: LeaderElector | undefined;
  #leading = false;
  /** Leadership changes run one after another, never interleaved. */
  #transition: Promise<void> = Promise.resolve();

  constructor(o: ManagerOptions) {
    this.#o = o;
    this.identity =
      (o.leaderElection ? o.leaderElection.identity : undefined) ||
      `${process.env.HOSTNAME || hostname()}_${randomBytes(4).toString('hex')}`;
    this.cache = o.cache ?? this.#newCache(o.namespace, o.resources ?? []);
    this.client =
      o.client ??
      createClient({
        kc: o.kc,
        scheme: o.scheme,
        cache: this.cache,
        userAgent: o.userAgent,
      });
    this.add(cacheRunnable('cache', this.cache, !o.cache, o));
  }

  /**
   * An extra cache, for a selection the main cache cannot hold (it keeps one selection per kind);
   * started and stopped with the manager.
   */
  addCache(namespace: string | undefined, resources: readonly CachedResource[]): InformerCache {
    const cache = this.#newCache(namespace, resources);
    this.add(cacheRunnable(`cache:${resources.map((r) => r.ref.plural).join(',')}`, cache, true, this.#o));
    return cache;
  }

  add<R extends Runnable>(r: R): R {
    (r.needLeaderElection ? this.#leader : this.#always).push(r);
    return r;
  }

  isLeader(): boolean {
    return this.#elector ? this.#elector.isLeader : this.#leading;
  }

  /** The identity of the lease holder last observed. */
  leader(): string | undefined {
    return this.#elector?.leader;
  }

  /**
   * Starts the runnables that need no lease (a failure stops what started and rethrows), then
   * campaigns for the lease — or, without leader election, starts the rest at once. Returns
   * without waiting for leadership: a standby is up and ready too.
   */
  async start(): Promise<void> {
    const le = this.#o.leaderElection;
    try {
      for (const r of this.#always) {
        this.#started.push(r); // before it starts: a half-started cache still needs its stop
        await r.start();
      }
      if (le === false) await this.#lead();
    } catch (err) {
      await this.stop();
      throw err;
    }
    if (le !== false) this.#campaign(le);
  }

  #campaign(le: LeaderElectionConfig): void {
    this.#elector = new LeaderElector({
      client: this.client,
      namespace: le.namespace ?? this.#o.namespace ?? 'default',
      name: le.name,
      identity: this.identity,
      leaseDurationMs: le.leaseDurationMs,
      renewDeadlineMs: le.renewDeadlineMs,
      retryPeriodMs: le.retryPeriodMs,
      logger: this.#o.logger,
      onStartedLeading: () => void this.#lead(),
      onStoppedLeading: () => void this.#unlead(),
      onNewLeader: (id) => this.#o.logger.info({ leader: id, self: id === this.identity }, 'leader observed'),
    });
    this.#elector.start();
  }

  /**
   * Drains the leader runnables (work in flight finishes while the lease is held), stops them, then
   * releases the lease (a standby takes over at once), then the rest.
   */
  async stop(): Promise<void> {
    if (this.#leading)
      for (const r of [...this.#leader].reverse())
        await r.drain?.().catch((err) => this.#o.logger.warn({ err, runnable: r.name }, 'draining failed'));
    await this.#unlead();
    await this.#elector?.stop();
    for (const r of this.#started.splice(0).reverse()) await this.#stopQuietly(r);
  }

  #lead(): Promise<void> {
    return this.#serially(async () => {
      if (this.#leading) return;
      this.#leading = true;
      for (const r of this.#leader) await r.start();
    });
  }

  #unlead(): Promise<void> {
    return this.#serially(async () => {
      if (!this.#leading) return;
      this.#leading = false;
      for (const r of [...this.#leader].reverse()) await this.#stopQuietly(r);
    });
  }

  /** One runnable failing to stop must not keep the others (or the lease release) from stopping. */
  async #stopQuietly(r: Runnable): Promise<void> {
    try {
      await r.stop();
    } catch (err) {
      this.#o.logger.warn({ err, runnable: r.name }, 'stopping failed');
    }
  }

  #serially(fn: () => Promise<void>): Promise<void> {
    const next = this.#transition.then(fn);
    this.#transition = next.catch((err) => this.#o.logger.error({ err }, 'leadership transition failed'));
    return next;
  }

  #newCache(namespace: string | undefined, resources: readonly CachedResource[]): InformerCache {
    const { kc, logger, informers } = this.#o;
    return InformerCache.of(
      { kc, namespace, logger, supervisor: { logger, ...informers }, pageSize: informers?.pageSize },
      resources,
    );
  }
}

/** Starting a cache waits for its first complete list, so nothing reads it half-filled. */
function cacheRunnable(name: string, cache: InformerCache, owned: boolean, o: ManagerOptions): Runnable {
  return {
    name,
    needLeaderElection: false,
    async start() {
      const t0 = performance.now();
      cache.start();
      await cache.waitForSync(o.syncTimeoutMs ?? 60_000);
      o.logger.info(
        {
          informers: cache.health().map((h) => `${h.name}:${h.objects}`),
          syncMs: Math.round(performance.now() - t0),
        },
        'caches synced',
      );
    },
    // A shared cache is its owner's to stop.
    stop: () => (owned ? cache.stop() : undefined),
  };
}
