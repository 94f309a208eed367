/**
 * A broker process for the chunk benchmark: `node test/bench/broker/chunk-server.ts memory|redis`
 * (REDIS_URL, CHUNK_KEY_PREFIX). The HTTP app and routes are the broker's own; only the chunk store
 * differs. Until `berth broker` wires CHUNK_BACKEND=redis this is how the Redis store is measured
 * as a process of its own (load generator and broker apart, as in run.ts).
 */
import { MemoryChunkStore } from '../../../pkg/broker/chunks/memory-store.ts';
import { openRedisChunkStore } from '../../../pkg/broker/chunks/redis-store.ts';
import type { ChunkStore } from '../../../pkg/broker/chunks/types.ts';
import { brokerConfig } from '../../../pkg/broker/config.ts';
import { createLogger } from '../../../pkg/log/index.ts';
import { brokerOn } from '../../broker/redis-app.ts';

const backend = process.argv[2] ?? 'memory';
const base = brokerConfig({});
const flushMs = process.env.SSE_FLUSH_MS;
const config = flushMs ? { ...base, sse: { ...base.sse, flushMs: Number(flushMs) } } : base;
const ttlSeconds = config.ttl.streamsSeconds;
const chunks: ChunkStore =
  backend === 'redis'
    ? await openRedisChunkStore(
        {
          url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
          ttlSeconds,
          maxChunks: config.caps.chunks.maxItems,
          keyPrefix: process.env.CHUNK_KEY_PREFIX,
        },
        createLogger({ level: 'warn' }),
      )
    : new MemoryChunkStore({ caps: config.caps.chunks, maxStreams: config.caps.streams, ttlSeconds });
const broker = await brokerOn(chunks, config);
console.log(JSON.stringify({ msg: 'chunk broker listening', port: broker.port, backend }));
process.on('SIGTERM', async () => {
  await broker.close();
  await chunks.close();
  process.exit(0);
});
