import type { SseHub } from '../http/index.ts';
import type { Logger } from '../log/index.ts';
import { openChunks } from './chunks/open.ts';
import type { BrokerConfig } from './config.ts';
import type { BackendHealth, DomainContext, OpenedDomain } from './core/domain.ts';
import type { BrokerStores } from './deps.ts';
import { openEvents } from './events/open.ts';
import { openIdempotency } from './idempotency/open.ts';
import type { IdempotencyStore } from './idempotency/types.ts';
import { openMessages } from './messages/open.ts';
import type { PgBackend } from './pg/index.ts';
import { openSessions } from './sessions/open.ts';
import { openTraces } from './traces/open.ts';

export interface OpenedStores {
  stores: BrokerStores;
  /** Idempotency keys of the purges: in PostgreSQL when a domain is, so every replica shares them. */
  idempotency: IdempotencyStore;
  /** Periodic upkeep of the stores: expiry, journal flush and compaction. */
  sweep(): void;
  /** The durable backends in use and whether they answer (empty when everything is in memory). */
  health(): Promise<BackendHealth[]>;
  close(): Promise<void>;
}

/**
 * Opens the broker's domains, each on the backend its configuration names (its own open.ts: memory
 * by default; MESSAGE_/EVENT_/SESSIONS_BACKEND=postgres share one PostgreSQL backend,
 * CHUNK_BACKEND=redis), loads what memory stores persisted, then connects every domain to the hub.
 * Durable stores feed every replica's writes, so watchers on any replica see them all.
 */
export async function openStores(config: BrokerConfig, hub: SseHub, logger: Logger): Promise<OpenedStores> {
  const persist = config.persistDir
    ? { dir: config.persistDir, flushMs: config.persistFlushMs, logger }
    : undefined;
  const pgDomains = Object.entries(config.backends)
    .filter(([, backend]) => backend === 'postgres')
    .map(([domain]) => domain);
  const pg = pgDomains.length ? await openPg(config, logger) : undefined;
  const ctx: DomainContext = { config, hub, logger, persist, pg };
  const opened: Array<OpenedDomain<unknown>> = [];
  const keep = <D extends OpenedDomain<unknown>>(d: D): D => {
    opened.push(d);
    return d;
  };
  try {
    // Sessions first: messages and events feed their roll-up.
    const sessions = keep(await openSessions(ctx));
    const messages = keep(await openMessages(ctx, sessions.rollup));
    const events = keep(await openEvents(ctx, sessions.rollup));
    const chunks = keep(await openChunks(ctx));
    const traces = keep(await openTraces(ctx));
    await Promise.all(opened.map((d) => d.load?.()));
    sessions.rebuild([events, messages]);
    for (const d of opened) d.start();
    return {
      stores: {
        messages: messages.store,
        events: events.store,
        sessions: sessions.store,
        chunks: chunks.store,
        traces: traces.store,
      },
      idempotency: await openIdempotency(pg),
      sweep: () => {
        for (const d of opened) d.sweep?.();
      },
      health: () => backendHealth(pg, pgDomains, opened),
      close: async () => {
        await Promise.all(opened.map((d) => d.close()));
        await pg?.close();
      },
    };
  } catch (err) {
    await Promise.allSettled(opened.map((d) => d.close()));
    await pg?.close();
    throw err;
  }
}

/**
 * The PostgreSQL backend the domains on it share. Imported only when one is: drizzle-orm and pg
 * cost an in-memory broker ~90 MB of RSS it would never use (docs/broker.md "Footprint").
 */
async function openPg(config: BrokerConfig, logger: Logger): Promise<PgBackend> {
  return (await import('./pg/index.ts')).openPgBackend({
    url: config.databaseUrl ?? '',
    logger,
    poolSize: config.database.poolSize,
    migrate: config.database.migrateOnStart,
    reapIntervalMs: config.database.reapIntervalMs,
  });
}

/** The shared PostgreSQL backend, then the backends a domain has to itself (Redis chunks). */
async function backendHealth(
  pg: PgBackend | undefined,
  pgDomains: string[],
  domains: Array<OpenedDomain<unknown>>,
): Promise<BackendHealth[]> {
  const out: BackendHealth[] = [];
  if (pg) {
    const h = await pg.health();
    out.push({
      backend: 'postgres',
      domains: [...pgDomains],
      ok: h.ok,
      ...(h.message ? { message: h.message } : {}),
    });
  }
  for (const d of domains) {
    const h = d.health?.();
    if (h) out.push(h);
  }
  return out;
}
