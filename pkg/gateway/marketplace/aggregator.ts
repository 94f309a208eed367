import { Limiter } from '../../http/limiter/index.ts';
import type { Client } from '../../kube/client/types.ts';
import type { Logger } from '../../log/index.ts';
import { readCredential } from './credentials.ts';
import { FetchFailure } from './fetch-failure.ts';
import type { GuardedFetcher } from './guarded-fetch.ts';
import type { ManifestItem } from './manifest.ts';
import type { ItemsView } from './schemas.ts';
import { fetchManifest } from './source-fetch.ts';
import { type Decoded, decodeAll, type SourceMap } from './store.ts';
import { TtlCache } from './ttl-cache.ts';

export interface AggregatorOptions {
  fetcher: GuardedFetcher;
  /** Per source (spec: 10 s). */
  fetchTimeoutMs: number;
  /** All sources together (spec: 30 s). */
  totalTimeoutMs: number;
  /** How long a successful fetch is reused (spec: 1 hour). */
  cacheTtlMs: number;
  logger: Logger;
  /** Sources of a namespace fetched; the others are reported, not fetched. Default 50. */
  maxSources?: number;
  /** Manifest bytes the cache keeps in all (successes; failures count a little each). Default 32 MiB. */
  cacheMaxBytes?: number;
  /** How long a failed fetch is answered from the cache, so a failing source is not hammered. Default 30 s. */
  failureTtlMs?: number;
  /** Fetches in flight in this process, all requests together. Default 16. */
  maxConcurrentFetches?: number;
  /** Fetches in flight for one request. Default 6. */
  maxFetchesPerRequest?: number;
}

export const AGGREGATOR_DEFAULTS = {
  maxSources: 50,
  cacheMaxBytes: 32 * 1024 * 1024,
  failureTtlMs: 30_000,
  maxConcurrentFetches: 16,
  maxFetchesPerRequest: 6,
};

/** What a remembered failure counts towards the cache's bytes (its message, its key). */
const FAILURE_BYTES = 1024;

type Outcome = { items: ManifestItem[] } | { error: FetchFailure };
type Cached = { items: ManifestItem[] } | { failure: FetchFailure };

/** Rejects with the signal's reason once it aborts: no source can hold the answer past its deadline. */
function deadline(signal: AbortSignal): Promise<never> {
  const p = new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
  // The race has its own subscription; this one keeps a deadline that fires after the source
  // already answered from being an unhandled rejection.
  p.catch(() => undefined);
  return p;
}

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

/**
 * The items of every source of a namespace, fetched concurrently as the requesting user: each
 * source within its own timeout, all within the total one, every failure reported inline (the
 * answer is always a 200). Successful fetches are cached per (namespace, source, url, credential
 * version); the credential is read as the user before the cache is consulted, so a user who may
 * not read a source's Secret never receives what was fetched with it.
 */
export class ItemsAggregator {
  readonly #o: AggregatorOptions & typeof AGGREGATOR_DEFAULTS;
  readonly #cache: TtlCache<Cached>;
  readonly #global: Limiter;

  constructor(o: AggregatorOptions) {
    this.#o = { ...AGGREGATOR_DEFAULTS, ...stripUndefined(o) };
    this.#cache = new TtlCache({ ttlMs: o.cacheTtlMs, maxBytes: this.#o.cacheMaxBytes });
    this.#global = new Limiter(this.#o.maxConcurrentFetches);
  }

  async items(client: Client, namespace: string, map: SourceMap): Promise<ItemsView> {
    const total = new AbortController();
    const timer = setTimeout(
      () =>
        total.abort(
          new FetchFailure(
            'aggregator_timeout',
            `the sources together took longer than ${seconds(this.#o.totalTimeoutMs)}`,
          ),
        ),
      this.#o.totalTimeoutMs,
    );
    try {
      const decoded = decodeAll(map);
      const own = new Limiter(this.#o.maxFetchesPerRequest);
      const max = this.#o.maxSources;
      const outcomes = await Promise.all(
        decoded.map((d, i) =>
          i < max
            ? this.#one(client, namespace, d, total.signal, own)
            : Promise.resolve(beyondLimit(max, decoded.length)),
        ),
      );
      const view: ItemsView = { items: [], sources: [] };
      decoded.forEach((d, i) => {
        const o = outcomes[i] as Outcome;
        const source = 'source' in d ? d.source : undefined;
        const items = 'items' in o ? o.items : [];
        view.items.push(...items.map((item) => ({ ...item, source: d.name })));
        view.sources.push({
          name: d.name,
          displayName: source?.displayName ?? d.name,
          url: source?.url ?? '',
          itemCount: items.length,
          ...('error' in o ? { error: { code: o.error.code, message: o.error.message } } : {}),
        });
      });
      return view;
    } finally {
      clearTimeout(timer);
    }
  }

  async #one(
    client: Client,
    namespace: string,
    d: Decoded,
    total: AbortSignal,
    request: Limiter,
  ): Promise<Outcome> {
    if ('problem' in d)
      return { error: new FetchFailure('parse_error', `the source entry is not valid: ${d.problem}`) };
    const own = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const signal = AbortSignal.any([total, own.signal]);
    const releases: Array<() => void> = [];
    try {
      // A slot of this request, then of the process; the wait counts against the total only.
      releases.push(await request.acquire(total), await this.#global.acquire(total));
      timer = setTimeout(
        () =>
          own.abort(
            new FetchFailure('fetch_timeout', `no manifest within ${seconds(this.#o.fetchTimeoutMs)}`),
          ),
        this.#o.fetchTimeoutMs,
      );
      return await Promise.race([this.#fetch(client, namespace, d.name, d.source, signal), deadline(signal)]);
    } catch (err) {
      const failure = signal.aborted ? signal.reason : err;
      if (failure instanceof FetchFailure) {
        this.#o.logger.debug({ namespace, source: d.name, code: failure.code }, 'marketplace source failed');
        return { error: failure };
      }
      this.#o.logger.error({ err, namespace, source: d.name }, 'marketplace source failed unexpectedly');
      return { error: new FetchFailure('network_error', 'the source could not be fetched') };
    } finally {
      clearTimeout(timer);
      for (const release of releases.reverse()) release();
    }
  }

  async #fetch(
    client: Client,
    namespace: string,
    name: string,
    source: Extract<Decoded, { source: unknown }>['source'],
    signal: AbortSignal,
  ): Promise<Outcome> {
    const read = source.auth
      ? await readCredential(client, namespace, { ...source, auth: source.auth }, signal)
      : undefined;
    const version =
      read && source.auth ? `${source.auth.scheme}:${source.auth.secretRef}:${read.version}` : '';
    const key = JSON.stringify([namespace, name, source.url, version]);
    const hit = this.#cache.get(key);
    if (hit) return 'items' in hit ? hit : { error: hit.failure };
    try {
      const { items, bytes } = await fetchManifest(this.#o.fetcher, source.url, read?.credential, signal);
      this.#cache.set(key, { items }, bytes);
      return { items };
    } catch (err) {
      // The source's own failure (not this request's total deadline) is remembered briefly.
      const failure = signal.aborted ? signal.reason : err;
      if (failure instanceof FetchFailure && failure.code !== 'aggregator_timeout')
        this.#cache.set(key, { failure }, FAILURE_BYTES, this.#o.failureTtlMs);
      throw err;
    }
  }
}

/** Sources past `maxSources` (in name order) are reported inline, never fetched. */
function beyondLimit(max: number, count: number): Outcome {
  return {
    error: new FetchFailure(
      'aggregator_timeout',
      `not fetched: the namespace has ${count} sources and the aggregator fetches the first ${max} (in name order)`,
    ),
  };
}

function stripUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
