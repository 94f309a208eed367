import type { SseHub } from '../http/index.ts';
import type { Logger } from '../log/index.ts';
import { MemoryChunkStore } from './chunks/memory-store.ts';
import { PURGED_FRAME } from './chunks/query-stream.ts';
import type { RedisChunkStore } from './chunks/redis-store.ts';
import { CHUNKS_TOPIC, QUERY_TOPICS, queryTopic } from './chunks/topics.ts';
import { type ChunkStore, chunkJson } from './chunks/types.ts';
import type { BrokerConfig } from './config.ts';
import { openJournal, type PersistOptions } from './core/persist.ts';
import type { BrokerStores } from './deps.ts';
import { MemoryEventStore } from './events/memory-store.ts';
import { EVENTS_TOPIC, eventMeta } from './events/topics.ts';
import type { EventStore } from './events/types.ts';
import { MemoryIdempotencyStore } from './idempotency/memory-store.ts';
import type { IdempotencyStore } from './idempotency/types.ts';
import { MemoryMessageStore } from './messages/memory-store.ts';
import { CONVERSATIONS_TOPIC, MESSAGES_TOPIC, messageMeta } from './messages/topics.ts';
import type { MessageStore } from './messages/types.ts';
import type { PgBackend } from './pg/index.ts';
import { MemorySessionStore } from './sessions/memory-store.ts';
import type { PgSessionStore } from './sessions/pg-store.ts';
import { SESSIONS_TOPIC } from './sessions/topics.ts';
import type { SessionStore } from './sessions/types.ts';
import { MemoryTraceStore } from './traces/memory-store.ts';
import { spanMeta, TRACES_TOPIC } from './traces/topics.ts';

/** One storage service as /readyz reports it. */
export interface BackendHealth {
  backend: 'postgres' | 'redis';
  /** The domains stored there. */
  domains: string[];
  ok: boolean;
  message?: string;
}

export interface OpenedStores {
  stores: BrokerStores;
  /** Idempotency keys of the purges: in PostgreSQL when a domain is, so every replica shares them. */
  idempotency: IdempotencyStore;
  /** Periodic upkeep of the in-memory stores: expiry, journal flush and compaction. */
  sweep(): void;
  /** The durable backends in use and whether they answer (empty when everything is in memory). */
  health(): Promise<BackendHealth[]>;
  close(): Promise<void>;
}

interface Upkeep {
  sweep?(): void;
  load?(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Builds the configured backends (memory by default; MESSAGE_/EVENT_/SESSIONS_BACKEND=postgres on
 * one shared PostgreSQL backend, CHUNK_BACKEND=redis), loads persisted memory state, and wires the
 * change feeds to the hub. Durable stores feed every replica's writes, so watchers on any replica
 * see them all.
 */
export async function openStores(config: BrokerConfig, hub: SseHub, logger: Logger): Promise<OpenedStores> {
  const b = config.backends;
  const persist: PersistOptions | undefined = config.persistDir
    ? { dir: config.persistDir, flushMs: config.persistFlushMs, logger }
    : undefined;
  const pgDomains = (['messages', 'events', 'sessions'] as const).filter((d) => b[d] === 'postgres');
  // The durable backends are loaded only when configured: drizzle, pg and ioredis are most of an
  // in-memory broker's idle footprint otherwise (see docs/broker.md "Footprint").
  const durable = pgDomains.length ? await import('./durable-openers.ts') : undefined;
  const pg: PgBackend | undefined = durable
    ? await durable.openPgBackend({
        url: config.databaseUrl ?? '',
        logger,
        poolSize: config.database.poolSize,
        migrate: config.database.migrateOnStart,
        reapIntervalMs: config.database.reapIntervalMs,
      })
    : undefined;
  const opened: Upkeep[] = [];
  const keep = <T extends Upkeep>(s: T): T => {
    opened.push(s);
    return s;
  };
  try {
    const sessionsPg =
      durable && pg && b.sessions === 'postgres'
        ? await durable.openPgSessionStore(pg, { ttlSeconds: config.ttl.sessionsSeconds })
        : undefined;
    const sessions: SessionStore = keep(
      sessionsPg ??
        new MemorySessionStore({
          maxSessions: config.caps.sessions,
          ttlSeconds: config.ttl.sessionsSeconds,
          journal: openJournal(persist, 'sessions'),
        }),
    );
    const messages: MessageStore = keep(
      durable && pg && b.messages === 'postgres'
        ? await durable.openPgMessageStore(pg, {
            defaultTtlSeconds: config.ttl.messagesSeconds,
            // Sessions in PostgreSQL are rolled up in the message's own transaction (once, by the
            // writing replica), not from the feed that every replica receives.
            rollup:
              sessionsPg &&
              ((client, items, at) => sessionsPg.rollupInTx(client, { kind: 'messages', items, at })),
          })
        : new MemoryMessageStore({
            caps: { ...config.caps.messages, conversations: config.caps.conversations },
            defaultTtlSeconds: config.ttl.messagesSeconds,
            journal: openJournal(persist, 'messages'),
          }),
    );
    const events: EventStore = keep(await openEventStore(config, pg, sessionsPg, persist));
    const chunks: ChunkStore = keep(
      b.chunks === 'redis'
        ? await (await import('./chunks/redis-store.ts')).openRedisChunkStore(
            {
              url: config.redisUrl ?? '',
              caFile: config.redisCaFile,
              keyPrefix: config.redisKeyPrefix,
              ttlSeconds: config.ttl.streamsSeconds,
              maxChunks: config.caps.chunks.maxItems,
            },
            logger,
          )
        : new MemoryChunkStore({
            caps: config.caps.chunks,
            maxStreams: config.caps.streams,
            ttlSeconds: config.ttl.streamsSeconds,
            journal: openJournal(persist, 'chunks'),
          }),
    );
    const traces = keep(
      new MemoryTraceStore({
        caps: config.caps.spans,
        ttlSeconds: config.ttl.eventsSeconds,
        journal: openJournal(persist, 'spans'),
      }),
    );
    await Promise.all(opened.map((s) => s.load?.()));
    // In-memory sessions are a roll-up: after a restart they are rebuilt from what the memory stores
    // kept. (Over durable events/messages they start empty: a replica's memory sessions are its own.)
    if (sessions instanceof MemorySessionStore) {
      if (events instanceof MemoryEventStore) for (const e of events.entries()) sessions.recordEvent(e);
      if (messages instanceof MemoryMessageStore)
        for (const m of messages.entries()) sessions.recordMessage(m);
    }
    const messagesRollUp = !(sessionsPg && b.messages === 'postgres');
    const eventsRollUp = !(sessionsPg && b.events === 'postgres');
    messages.onAppend((e) => {
      hub.publish(MESSAGES_TOPIC, e.seq, messageMeta(e), e.json);
      if (messagesRollUp) sessions.recordMessage(e);
    });
    messages.onConversation((c) =>
      hub.publish(CONVERSATIONS_TOPIC, c.sequence, undefined, () => JSON.stringify(c)),
    );
    events.onAppend((e) => {
      hub.publish(EVENTS_TOPIC, e.seq, eventMeta(e), e.json);
      if (eventsRollUp) sessions.recordEvent(e);
    });
    chunks.onAppend((e) => {
      hub.publish(CHUNKS_TOPIC, e.seq, e, e.json);
      // The per-query stream frames the bare chunk itself (and may split it), so it gets the record.
      hub.publish(queryTopic(e.query), e.seq, e, () => chunkJson(e));
    });
    chunks.onPurge(() => hub.endTopics(QUERY_TOPICS, PURGED_FRAME));
    traces.onAppend((e) => hub.publish(TRACES_TOPIC, e.seq, spanMeta(e), () => e.json()));
    sessions.onChange((seq, view, json) => {
      // A session changes on every message: build its view only when someone watches.
      if (hub.hasSubscribers(SESSIONS_TOPIC)) hub.publish(SESSIONS_TOPIC, seq, view(), json);
    });

    return {
      stores: { messages, events, sessions, chunks, traces },
      idempotency: durable && pg ? new durable.PgIdempotencyStore(pg) : new MemoryIdempotencyStore(),
      sweep: () => {
        for (const s of opened) s.sweep?.();
      },
      health: () =>
        backendHealth(pg, pgDomains, b.chunks === 'redis' ? (chunks as RedisChunkStore) : undefined),
      close: async () => {
        await Promise.all(opened.map((s) => s.close()));
        await pg?.close();
      },
    };
  } catch (err) {
    await Promise.allSettled(opened.map((s) => s.close()));
    await pg?.close();
    throw err;
  }
}

/** The event store: PostgreSQL (rolling sessions up in its own transaction when they are there too) or memory. */
async function openEventStore(
  config: BrokerConfig,
  pg: PgBackend | undefined,
  sessions: PgSessionStore | undefined,
  persist: PersistOptions | undefined,
): Promise<EventStore & Upkeep> {
  if (pg && config.backends.events === 'postgres')
    return (await import('./durable-openers.ts')).openPgEventStore(pg, {
      ttlSeconds: config.ttl.eventsSeconds,
      sessions,
    });
  return new MemoryEventStore({
    caps: config.caps.events,
    ttlSeconds: config.ttl.eventsSeconds,
    journal: openJournal(persist, 'events'),
  });
}

async function backendHealth(
  pg: PgBackend | undefined,
  pgDomains: readonly string[],
  redis: RedisChunkStore | undefined,
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
  if (redis) {
    const h = redis.health();
    out.push({ backend: 'redis', domains: ['chunks'], ok: h.ok, ...(h.error ? { message: h.error } : {}) });
  }
  return out;
}
