import { type DomainContext, type OpenedDomain, openedDomain } from '../core/domain.ts';
import { openJournal } from '../core/persist.ts';
import { MemoryChunkStore } from './memory-store.ts';
import { PURGED_FRAME } from './query-stream.ts';
import { CHUNKS_TOPIC, QUERY_TOPICS, queryTopic } from './topics.ts';
import { type ChunkStore, chunkJson } from './types.ts';

/** Chunks in memory (the default) or in Redis (CHUNK_BACKEND=redis). */
export async function openChunks(ctx: DomainContext): Promise<OpenedDomain<ChunkStore>> {
  const { config, hub } = ctx;
  const connect = (store: ChunkStore) => {
    store.onAppend((e) => {
      hub.publish(CHUNKS_TOPIC, e.seq, e, e.json);
      // The per-query stream frames the bare chunk itself (and may split it), so it gets the record.
      hub.publish(queryTopic(e.query), e.seq, e, () => chunkJson(e));
    });
    // A purge on any replica ends the query streams still open here.
    store.onPurge(() => hub.endTopics(QUERY_TOPICS, PURGED_FRAME));
  };
  if (config.backends.chunks === 'redis') {
    // Imported only when configured (docs/broker.md "Footprint").
    const store = await (await import('./redis-store.ts')).openRedisChunkStore(
      {
        url: config.redisUrl ?? '',
        caFile: config.redisCaFile,
        keyPrefix: config.redisKeyPrefix,
        ttlSeconds: config.ttl.streamsSeconds,
        maxChunks: config.caps.chunks.maxItems,
      },
      ctx.logger,
    );
    return {
      ...openedDomain(store, connect),
      health: () => {
        const h = store.health();
        return { backend: 'redis', domains: ['chunks'], ok: h.ok, ...(h.error ? { message: h.error } : {}) };
      },
    };
  }
  const store = new MemoryChunkStore({
    caps: config.caps.chunks,
    maxStreams: config.caps.streams,
    ttlSeconds: config.ttl.streamsSeconds,
    journal: openJournal(ctx.persist, 'chunks'),
  });
  return openedDomain(store, connect);
}
