import type { AnyOpenAPIHono } from '../../http/index.ts';
import type { Client } from '../../kube/client/types.ts';
import type { Logger } from '../../log/index.ts';
import { parseAllowedHosts } from './address.ts';
import { ItemsAggregator } from './aggregator.ts';
import { GuardedFetcher, type Resolver } from './guarded-fetch.ts';
import { mountMarketplaceRoutes } from './routes.ts';
import { SourceService } from './sources.ts';

export { parseAllowedHosts } from './address.ts';
export type { Resolver } from './guarded-fetch.ts';

/** The spec's limits (Limits: 10 s per source, 30 s in all, one hour of cache) and the guard's knobs. */
export interface MarketplaceOptions {
  /** MARKETPLACE_ALLOWED_HOSTS, as text (comma list of host:port) or parsed. */
  allowedHosts?: string | ReadonlySet<string>;
  fetchTimeoutMs?: number;
  totalTimeoutMs?: number;
  cacheTtlMs?: number;
  /** Largest manifest read (default 5 MiB). */
  maxManifestBytes?: number;
  /** Sources of a namespace fetched by the items aggregator (default 50; the rest are reported, not fetched). */
  maxSources?: number;
  /** Manifest bytes kept in the items cache (default 32 MiB). */
  cacheMaxBytes?: number;
  /** How long a failed fetch is answered from the cache (default 30 s). */
  failureTtlMs?: number;
  /** Manifest fetches in flight in the process (default 16) and per request (default 6). */
  maxConcurrentFetches?: number;
  maxFetchesPerRequest?: number;
  /** CAs trusted for sources besides the system's (PEM). */
  ca?: string[];
  /** Name resolution of the guard (tests). */
  resolve?: Resolver;
}

export interface Marketplace {
  /** A gateway extension: mounts the seven endpoints under `/api/v1` and `/v1`. */
  mount(app: AnyOpenAPIHono): void;
  close(): Promise<void>;
}

/**
 * The marketplace of one API instance: sources CRUD, permissions probe and items aggregator of its
 * namespace, every call made as the requesting user (pkg/gateway/marketplace/access.ts).
 */
export function createMarketplace(
  deps: { client: Client; namespace: string; logger: Logger },
  o: MarketplaceOptions = {},
): Marketplace {
  const allowedHosts =
    typeof o.allowedHosts === 'string' || o.allowedHosts === undefined
      ? parseAllowedHosts(o.allowedHosts)
      : o.allowedHosts;
  const logger = deps.logger.child({ component: 'marketplace' });
  const fetcher = new GuardedFetcher({
    allowedHosts,
    ca: o.ca,
    resolve: o.resolve,
    maxBytes: o.maxManifestBytes ?? 5 * 1024 * 1024,
  });
  const fetchTimeoutMs = o.fetchTimeoutMs ?? 10_000;
  const sources = new SourceService({ own: deps.client, fetcher, allowedHosts, fetchTimeoutMs, logger });
  const aggregator = new ItemsAggregator({
    fetcher,
    fetchTimeoutMs,
    totalTimeoutMs: o.totalTimeoutMs ?? 30_000,
    cacheTtlMs: o.cacheTtlMs ?? 60 * 60 * 1000,
    logger,
    maxSources: o.maxSources,
    cacheMaxBytes: o.cacheMaxBytes,
    failureTtlMs: o.failureTtlMs,
    maxConcurrentFetches: o.maxConcurrentFetches,
    maxFetchesPerRequest: o.maxFetchesPerRequest,
  });
  const handlers = { namespace: deps.namespace, sources, aggregator, own: deps.client, logger };
  return {
    mount(app) {
      mountMarketplaceRoutes(app, '/api/v1', handlers);
      mountMarketplaceRoutes(app, '/v1', handlers);
    },
    close: () => fetcher.close(),
  };
}
