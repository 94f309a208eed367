import { serve } from '@hono/node-server';
import { createBrokerApp } from '../../pkg/broker/app.ts';
import { CHUNKS_TOPIC, queryTopic } from '../../pkg/broker/chunks/topics.ts';
import { type ChunkStore, chunkJson } from '../../pkg/broker/chunks/types.ts';
import { type BrokerConfig, brokerConfig } from '../../pkg/broker/config.ts';
import { MemoryEventStore } from '../../pkg/broker/events/memory-store.ts';
import { MemoryMessageStore } from '../../pkg/broker/messages/memory-store.ts';
import { MemorySessionStore } from '../../pkg/broker/sessions/memory-store.ts';
import { MemoryTraceStore } from '../../pkg/broker/traces/memory-store.ts';
import { SseHub } from '../../pkg/http/index.ts';
import { createLogger } from '../../pkg/log/index.ts';

/**
 * A broker HTTP app whose chunks live in the given store (other domains in memory), on a free
 * loopback port, wired to its hub as pkg/broker/stores.ts wires the in-memory store. No vitest
 * import: the benchmark's server process uses it too.
 */
export async function brokerOn(chunks: ChunkStore, config: BrokerConfig = brokerConfig({})) {
  const logger = createLogger({ level: 'silent' });
  const hub = new SseHub({ heartbeatMs: config.sse.heartbeatMs, flushMs: config.sse.flushMs });
  chunks.onAppend((e) => {
    hub.publish(CHUNKS_TOPIC, e.seq, e, e.json);
    hub.publish(queryTopic(e.query), e.seq, e, () => chunkJson(e));
  });
  const stores = {
    messages: new MemoryMessageStore({
      caps: { ...config.caps.messages, conversations: 100 },
      defaultTtlSeconds: 60,
    }),
    events: new MemoryEventStore({ caps: config.caps.events, ttlSeconds: 60 }),
    sessions: new MemorySessionStore({ maxSessions: 10, ttlSeconds: 60 }),
    traces: new MemoryTraceStore({ caps: config.caps.spans, ttlSeconds: 60 }),
    chunks,
  };
  const app = createBrokerApp({ config, logger, hub, stores });
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((r) => server.once('listening', () => r()));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    /** Its SSE hub: a test ends the open streams as a draining broker does (`endAll`). */
    hub,
    close: async () => {
      hub.stop();
      (server as unknown as { closeAllConnections(): void }).closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
