import type { SseHub } from '../../http/index.ts';
import type { Logger } from '../../log/index.ts';
import type { BrokerConfig } from '../config.ts';
import type { PgBackend } from '../pg/index.ts';
import type { PersistOptions } from './persist.ts';
import type { WatchDeps } from './watch-route.ts';

/**
 * What a domain's `open` (pkg/broker/<domain>/open.ts) gets from stores.ts. The domain picks its
 * backend from `config.backends` itself; the PostgreSQL backend is shared by every domain on it,
 * so stores.ts opens it once and hands it over.
 */
export interface DomainContext {
  config: BrokerConfig;
  hub: SseHub;
  logger: Logger;
  /** BROKER_PERSIST_DIR: where memory stores journal (undefined: nothing persists). */
  persist: PersistOptions | undefined;
  /** The shared PostgreSQL backend, open when at least one domain is on it. */
  pg: PgBackend | undefined;
}

/** One storage service as /readyz reports it. */
export interface BackendHealth {
  backend: 'postgres' | 'redis';
  /** The domains stored there. */
  domains: string[];
  ok: boolean;
  message?: string;
}

/**
 * One opened domain, as stores.ts drives it: every domain `load`s (what its memory store
 * journaled), then every domain `start`s, then `sweep` runs periodically until `close`.
 */
export interface OpenedDomain<S> {
  store: S;
  load?(): Promise<void>;
  /**
   * Publishes the store's changes to the SSE hub (and feeds the session roll-up): only after
   * every domain loaded and sessions were rebuilt, so none of that is published again.
   */
  start(): void;
  /** Periodic upkeep: a memory store's expiry, journal flush and compaction; Redis's stream index. */
  sweep?(): void;
  /** A backend the domain has to itself (Redis chunks), for /readyz; the shared PostgreSQL is stores.ts's. */
  health?(): BackendHealth;
  close(): Promise<void>;
}

/** A domain that feeds the session roll-up (`R`, declared by the domain): messages, events. */
export interface FeedingDomain<S, R> extends OpenedDomain<S> {
  /** Feeds what a memory store kept to the roll-up again (in-memory sessions rebuilt after a restart). */
  replay?(rollup: R): void;
}

/** What stores.ts calls on a store, where the store has it: memory stores load and sweep, Redis sweeps. */
interface Upkeep {
  load?(): Promise<void>;
  sweep?(): void;
  close(): Promise<void>;
}

/** The opened domain of a store: its upkeep, and a `start` that runs `connect(store)`. */
export function openedDomain<S extends Upkeep>(store: S, connect: (store: S) => void): OpenedDomain<S> {
  return {
    store,
    load: () => store.load?.() ?? Promise.resolve(),
    start: () => connect(store),
    sweep: () => store.sweep?.(),
    close: () => store.close(),
  };
}

/** The shared PostgreSQL backend, when the domain's backend (in `config.backends`) is postgres. */
export function pgFor(ctx: DomainContext, backend: string): PgBackend | undefined {
  return backend === 'postgres' ? ctx.pg : undefined;
}

/**
 * The backend of a domain that feeds the session roll-up, and how it feeds it: with sessions on
 * PostgreSQL too, a domain there rolls up inside its write's own transaction (`inTx`: once, by the
 * writing replica), not from the change feed every replica receives (`inTx` undefined).
 */
export function feederBackend<T>(
  ctx: DomainContext,
  backend: string,
  rollup: { inTx?: T | undefined },
): { pg: PgBackend | undefined; inTx: T | undefined } {
  const pg = pgFor(ctx, backend);
  return { pg, inTx: pg ? rollup.inTx : undefined };
}

/**
 * What a domain's routes get: the broker's config, logger and hub, and the stores they serve
 * (`S`, e.g. `{ messages: MessageStore }`). BrokerDeps (deps.ts) is one, over every store.
 */
export interface RouteDeps<S> {
  config: BrokerConfig;
  logger: Logger;
  hub: SseHub;
  stores: S;
}

export function watchDeps(d: RouteDeps<unknown>): WatchDeps {
  return { hub: d.hub, logger: d.logger, maxBufferedBytes: d.config.sse.maxBufferedBytes };
}
