import type { SseHub } from '../http/index.ts';
import type { Logger } from '../log/index.ts';
import { MemoryChunkStore } from './chunks/memory-store.ts';
import { queryTopic } from './chunks/query-stream.ts';
import { CHUNKS_TOPIC } from './chunks/routes.ts';
import { chunkJson } from './chunks/types.ts';
import type { BrokerConfig } from './config.ts';
import { openJournal, type PersistOptions } from './core/persist.ts';
import type { BrokerStores } from './deps.ts';
import { MemoryEventStore } from './events/memory-store.ts';
import { EVENTS_TOPIC, eventMeta } from './events/routes.ts';
import { CONVERSATIONS_TOPIC } from './messages/conversation-routes.ts';
import { MemoryMessageStore } from './messages/memory-store.ts';
import { MESSAGES_TOPIC, messageMeta } from './messages/routes.ts';
import { MemorySessionStore } from './sessions/memory-store.ts';
import { SESSIONS_TOPIC } from './sessions/routes.ts';
import { MemoryTraceStore } from './traces/memory-store.ts';
import { spanMeta, TRACES_TOPIC } from './traces/routes.ts';

export class NotImplementedBackendError extends Error {
  override name = 'NotImplementedBackendError';
}

export interface OpenedStores {
  stores: BrokerStores;
  /** Periodic upkeep: expiry, journal flush and compaction. */
  sweep(): void;
  close(): Promise<void>;
}

/** Builds the configured backends (in memory by default), loads persisted state, wires change feeds to the hub. */
export async function openStores(config: BrokerConfig, hub: SseHub, logger: Logger): Promise<OpenedStores> {
  const durable = Object.entries(config.backends).filter(([, b]) => b !== 'memory');
  if (durable.length)
    throw new NotImplementedBackendError(
      `${durable.map(([d, b]) => `${d} backend "${b}"`).join(', ')}: not implemented yet in this build; unset ${durable
        .map(([d]) => envName(d))
        .join(', ')} to use the in-memory backend`,
    );
  const persist: PersistOptions | undefined = config.persistDir
    ? { dir: config.persistDir, flushMs: config.persistFlushMs, logger }
    : undefined;

  const messages = new MemoryMessageStore({
    caps: { ...config.caps.messages, conversations: config.caps.conversations },
    defaultTtlSeconds: config.ttl.messagesSeconds,
    journal: openJournal(persist, 'messages'),
  });
  const events = new MemoryEventStore({
    caps: config.caps.events,
    ttlSeconds: config.ttl.eventsSeconds,
    journal: openJournal(persist, 'events'),
  });
  const sessions = new MemorySessionStore({
    maxSessions: config.caps.sessions,
    ttlSeconds: config.ttl.sessionsSeconds,
    journal: openJournal(persist, 'sessions'),
  });
  const chunks = new MemoryChunkStore({
    caps: config.caps.chunks,
    maxStreams: config.caps.streams,
    ttlSeconds: config.ttl.streamsSeconds,
    journal: openJournal(persist, 'chunks'),
  });
  const traces = new MemoryTraceStore({
    caps: config.caps.spans,
    ttlSeconds: config.ttl.eventsSeconds,
    journal: openJournal(persist, 'spans'),
  });
  await Promise.all([messages.load(), events.load(), sessions.load(), chunks.load(), traces.load()]);
  // Sessions are a roll-up: after a restart they are rebuilt from what the stores kept.
  for (const e of events.entries()) sessions.recordEvent(e);
  for (const m of messages.entries()) sessions.recordMessage(m);

  messages.onAppend((e) => {
    hub.publish(MESSAGES_TOPIC, e.seq, messageMeta(e), e.json);
    sessions.recordMessage(e);
  });
  messages.onConversation((c) =>
    hub.publish(CONVERSATIONS_TOPIC, c.sequence, undefined, () => JSON.stringify(c)),
  );
  events.onAppend((e) => {
    hub.publish(EVENTS_TOPIC, e.seq, eventMeta(e), e.json);
    sessions.recordEvent(e);
  });
  chunks.onAppend((e) => {
    hub.publish(CHUNKS_TOPIC, e.seq, e, e.json);
    // The per-query stream frames the bare chunk itself (and may split it), so it gets the record.
    hub.publish(queryTopic(e.query), e.seq, e, () => chunkJson(e));
  });
  traces.onAppend((e) => hub.publish(TRACES_TOPIC, e.seq, spanMeta(e), e.json));
  sessions.onChange((seq, view, json) => {
    // A session changes on every message: build its view only when someone watches.
    if (hub.hasSubscribers(SESSIONS_TOPIC)) hub.publish(SESSIONS_TOPIC, seq, view(), json);
  });

  const all = [messages, events, sessions, chunks, traces];
  return {
    stores: { messages, events, sessions, chunks, traces },
    sweep: () => {
      for (const s of all) s.sweep();
    },
    close: async () => {
      await Promise.all(all.map((s) => s.close()));
    },
  };
}

function envName(domain: string): string {
  return (
    {
      messages: 'MESSAGE_BACKEND',
      events: 'EVENT_BACKEND',
      sessions: 'SESSIONS_BACKEND',
      chunks: 'CHUNK_BACKEND',
    }[domain] ?? domain
  );
}
