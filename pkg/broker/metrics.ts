import type { Context, Env, MiddlewareHandler } from 'hono';
import { Counter, Gauge, Registry } from 'prom-client';
import { HttpError, httpMetrics, type RequestInfo, type SseHub } from '../http/index.ts';
import { QUERY_TOPICS } from './chunks/topics.ts';
import type { StoreStats } from './core/capped-log.ts';
import type { BrokerStores } from './deps.ts';

/** The broker's domains, as its routes and SSE topics name them. */
const DOMAIN_OF_ROUTE: Array<[RegExp, string]> = [
  [/^\/(v1\/)?traces/, 'traces'],
  [/^\/stream/, 'chunks'],
  [/^\/events/, 'events'],
  [/^\/sessions/, 'sessions'],
  [/^\/conversations\/[^/]+\/queries\//, 'messages'],
  [/^\/conversations/, 'conversations'],
  [/^\/(messages|queries|memory-status)/, 'messages'],
];

export function domainOfRoute(route: string): string | undefined {
  return DOMAIN_OF_ROUTE.find(([re]) => re.test(route))?.[1];
}

// Route patterns are a fixed set: each one's domain is worked out once.
const domainCache = new Map<string, string | undefined>();
const cachedDomainOf = (route: string): string | undefined => {
  if (!domainCache.has(route)) domainCache.set(route, domainOfRoute(route));
  return domainCache.get(route);
};

/** A hub topic's domain: the per-query chunk streams (`stream/<query>`) belong to chunks. */
export function domainOfTopic(topic: string): string {
  return topic.startsWith(QUERY_TOPICS) ? 'chunks' : topic;
}

const isStream = (c: Context, route: string) =>
  route === '/stream/:query' || ['true', '1'].includes(c.req.query('watch') ?? '');

const hasStats = (s: unknown): s is { stats(): StoreStats } =>
  typeof (s as { stats?: unknown }).stats === 'function';

/**
 * The broker's Prometheus metrics (`berth_broker_*`): requests by route and status with latency
 * (pkg/http's middleware), reads, writes and watches per domain, SSE watchers and the slow ones
 * cut off, in-memory store sizes and evictions, and storage backend failures.
 */
export class BrokerMetrics {
  readonly registry = new Registry();
  readonly middleware: MiddlewareHandler<Env>;
  readonly #backendErrors: Counter<'backend' | 'domain'>;

  constructor(hub: SseHub, stores: BrokerStores) {
    const registers = [this.registry];
    const perDomain = (name: string, help: string) =>
      new Counter({ name: `berth_broker_${name}`, help, labelNames: ['domain'], registers });
    const writes = perDomain('writes_total', 'Successful write requests (POST, DELETE) per domain');
    const reads = perDomain(
      'reads_total',
      'Successful read requests (lists and gets, not watches) per domain',
    );
    const watches = perDomain(
      'watches_total',
      'SSE watches opened (watch=true, GET /stream/{query}) per domain',
    );
    this.#backendErrors = new Counter({
      name: 'berth_broker_backend_errors_total',
      help: 'Requests failed because a storage backend (postgres, redis) did not answer, and failed store upkeep',
      labelNames: ['backend', 'domain'],
      registers,
    });
    this.middleware = httpMetrics({
      registry: this.registry,
      prefix: 'berth_broker_',
      onRequest: (c, info) => this.#count(c, info, { writes, reads, watches }),
    });
    new Gauge({
      name: 'berth_broker_sse_watchers',
      help: 'Open SSE streams per domain',
      labelNames: ['domain'],
      registers,
      collect() {
        this.reset();
        for (const [topic, n] of hub.topicSizes()) this.inc({ domain: domainOfTopic(topic) }, n);
      },
    });
    new Counter({
      name: 'berth_broker_sse_slow_disconnects_total',
      help: 'SSE watchers cut off because they read slower than the stream (they resume with Last-Event-ID)',
      registers,
      collect() {
        this.reset();
        this.inc(hub.stats().disconnectedSlow);
      },
    });
    this.#storeMetrics(stores);
  }

  /** A failure of background store upkeep (expiry, journal flush) outside any request. */
  upkeepFailed(): void {
    this.#backendErrors.inc({ backend: 'memory', domain: 'all' });
  }

  #count(c: Context, info: RequestInfo, m: Record<'writes' | 'reads' | 'watches', Counter<'domain'>>): void {
    const domain = cachedDomainOf(info.route);
    if (!domain) return;
    const err = c.error;
    if (err instanceof HttpError && err.code === 'storage_unavailable') {
      const backend = (err.details as { backend?: string } | undefined)?.backend ?? 'unknown';
      this.#backendErrors.inc({ backend, domain });
    }
    if (info.status >= 400) return;
    if (info.method === 'GET') (isStream(c, info.route) ? m.watches : m.reads).inc({ domain });
    else if (info.method !== 'HEAD' && info.method !== 'OPTIONS') m.writes.inc({ domain });
  }

  /** Sizes and evictions of the in-memory stores (durable backends keep their own metrics). */
  #storeMetrics(stores: BrokerStores): void {
    const registers = [this.registry];
    const each = (fn: (domain: string, s: StoreStats) => void) => {
      for (const [domain, store] of Object.entries(stores)) if (hasStats(store)) fn(domain, store.stats());
    };
    new Gauge({
      name: 'berth_broker_store_items',
      help: 'Records held by an in-memory store',
      labelNames: ['domain'],
      registers,
      collect() {
        each((domain, s) => this.set({ domain }, s.items));
      },
    });
    const optional = (name: string, help: string, pick: (s: StoreStats) => number | undefined) =>
      new Gauge({
        name,
        help,
        labelNames: ['domain'],
        registers,
        collect() {
          each((domain, s) => {
            const v = pick(s);
            if (v !== undefined) this.set({ domain }, v);
          });
        },
      });
    optional(
      'berth_broker_store_bytes',
      'Estimated heap bytes of the records of an in-memory store (the quantity its byte cap bounds)',
      (s) => s.bytes,
    );
    optional(
      'berth_broker_store_slab_bytes',
      'Bytes of the off-heap buffers an in-memory store packs its records JSON in (messages, spans)',
      (s) => s.slabBytes,
    );
    new Counter({
      name: 'berth_broker_store_evictions_total',
      help: 'Records an in-memory store dropped, oldest first, to stay within its caps',
      labelNames: ['domain'],
      registers,
      collect() {
        this.reset();
        each((domain, s) => this.inc({ domain }, s.evicted));
      },
    });
  }
}
