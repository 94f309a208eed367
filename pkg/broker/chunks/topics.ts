import type { StoredChunk } from './types.ts';

/**
 * The SSE hub topics of chunks: open.ts publishes to them, the routes and query-stream.ts watch
 * them. The firehose (`GET /stream`) has one topic; each query's stream (`GET /stream/{query}`)
 * has its own, under QUERY_TOPICS.
 */
export const CHUNKS_TOPIC = 'chunks';
export const QUERY_TOPICS = 'stream/';
export const queryTopic = (query: string) => `${QUERY_TOPICS}${query}`;

/** A chunk record is small and flat: a watcher's filter gets the record itself. */
export const chunkMeta = (e: StoredChunk) => e;
