import { createRoute } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { z } from 'zod';
import {
  type AnyOpenAPIHono,
  HttpError,
  httpError,
  mediaTypeOf,
  relayedError,
  requestBodyChunks,
  route,
} from '../../http/index.ts';
import { type RouteDeps, watchDeps } from '../core/domain.ts';
import { boolParam, DEFAULT_LIMIT, idParam, listQueryShape, pageResponse } from '../core/list.ts';
import { type DomainRoutes, mountPurgeAll } from '../core/routes.ts';
import { replayOf, serveWatch, watchHead, watchStart } from '../core/watch-route.ts';
import { ChunkParseError, parseJsonChunks, readNdjson } from './ndjson.ts';
import { serveQueryStream } from './query-stream.ts';
import { MIN_CHUNK_SIZE } from './split.ts';
import { CHUNKS_TOPIC, chunkMeta } from './topics.ts';
import type { ChunkStore, ChunkText, StoredChunk } from './types.ts';

const tags = ['Chunks'];
const NDJSON = new Set([
  '',
  'application/x-ndjson',
  'application/ndjson',
  'application/jsonl',
  'application/x-jsonlines',
]);

const streamQuery = z.object({
  'from-beginning': boolParam,
  'wait-for-query': z
    .string()
    .regex(/^\d{1,6}$/, 'wait-for-query must be a number of seconds')
    .transform((v) => Math.min(300, Math.max(1, Number(v))))
    .optional(),
  'max-chunk-size': z
    .string()
    .regex(/^\d{1,9}$/, 'max-chunk-size must be a positive number of bytes')
    .transform(Number)
    .pipe(
      z
        .number()
        .int()
        .min(
          MIN_CHUNK_SIZE,
          `max-chunk-size must be at least ${MIN_CHUNK_SIZE} (bytes of content per piece)`,
        ),
    )
    .optional(),
});

type ChunkRouteDeps = RouteDeps<{ chunks: ChunkStore }>;

export function mountChunkRoutes(app: AnyOpenAPIHono, deps: ChunkRouteDeps): void {
  const store = deps.stores.chunks;

  route(
    app,
    createRoute({
      method: 'get',
      path: '/stream',
      tags,
      summary: 'The chunk firehose (records {sequence, query, timestamp, type, chunk}), paged or watched',
      request: { query: z.object({ query: z.string().min(1).optional(), ...listQueryShape }) },
      responses: { 200: { description: '{items,total,hasMore,nextCursor} or SSE' } },
    }),
    async (c) => {
      const q = c.req.valid('query');
      if (q.watch) {
        const after = watchStart(c, q);
        // A watch that replays reads the store once before the SSE response opens, so a store that is
        // down answers the error status (503) instead of a stream that ends right after it opened.
        if (after !== undefined) await store.page(q.query, after, 1);
        return serveWatch(c, watchDeps(deps), {
          topic: CHUNKS_TOPIC,
          after,
          head: await watchHead(after, store),
          filter: q.query === undefined ? undefined : (e: StoredChunk) => e.query === q.query,
          replay: replayOf(async (from, n) => (await store.page(q.query, from, n)).items, chunkMeta),
        });
      }
      const cursor = q.cursor ?? 0;
      const p = await store.page(q.query, cursor, q.limit ?? DEFAULT_LIMIT);
      return pageResponse(p, (e) => e.json, cursor);
    },
  );

  route(
    app,
    createRoute({
      method: 'get',
      path: '/stream/{query}',
      tags,
      summary: "SSE of one query's chunks, ending with [DONE]",
      request: { params: idParam('query'), query: streamQuery },
      responses: {
        200: { description: 'text/event-stream' },
        404: { description: 'Unknown query and no wait-for-query' },
      },
    }),
    async (c) => {
      const { query } = c.req.valid('param');
      const q = c.req.valid('query');
      const state = await store.state(query);
      if (!state && q['wait-for-query'] === undefined)
        throw httpError(
          'not_found',
          `no stream for query ${JSON.stringify(query)}; pass wait-for-query=<seconds> to wait for it`,
        );
      return serveQueryStream(c, watchDeps(deps), store, query, state, {
        fromBeginning: q['from-beginning'] ?? false,
        waitSeconds: q['wait-for-query'],
        maxChunkSize: q['max-chunk-size'],
        idleMs: deps.config.sse.streamIdleMs,
        head: await watchHead(undefined, store),
      });
    },
  );

  route(
    app,
    createRoute({
      method: 'post',
      path: '/stream/{query}',
      tags,
      summary: 'Push chunks: NDJSON (parsed as it arrives) or JSON (one chunk or an array)',
      // The body is read by the handler (streamed NDJSON), so it is described rather than validated here.
      description:
        'Body: `application/x-ndjson` — one `chat.completion.chunk` object per line, stored as each line arrives (the last line may lack a newline); or `application/json` — one chunk object or an array of them. A POST after completion starts a new run of the stream.',
      request: { params: idParam('query') },
      responses: { 200: { description: '{status: "stream_processed", query, chunks_received}' } },
    }),
    (c) => ingest(c, deps, c.req.valid('param').query),
  );

  route(
    app,
    createRoute({
      method: 'post',
      path: '/stream/{query}/complete',
      tags,
      summary: "Mark a query's stream complete",
      request: { params: idParam('query') },
      responses: {
        200: { description: '{status: "completed"|"already_completed", query}' },
        404: { description: 'Unknown query' },
      },
    }),
    async (c) => {
      const { query } = c.req.valid('param');
      const r = await store.complete(query);
      if (r.result === 'unknown')
        throw httpError('not_found', `no stream for query ${JSON.stringify(query)}`);
      return c.json({ status: r.result, query }, 200);
    },
  );

  mountPurgeAll(app, {
    path: '/stream',
    tags,
    summary: 'Purge every chunk and stream state (sequences are not reused)',
    purge: () => store.purge(),
  });
}

async function ingest(c: Context, deps: ChunkRouteDeps, query: string): Promise<Response> {
  const store = deps.stores.chunks;
  const type = mediaTypeOf(c);
  let received = 0;
  try {
    if (type === 'application/json') {
      const chunks = parseJsonChunks(await c.req.text());
      await store.append(query, chunks);
      received = chunks.length;
    } else if (NDJSON.has(type)) {
      await store.append(query, []);
      const body = requestBodyChunks(c);
      if (body)
        await ingestNdjson(
          body,
          (chunks) => store.append(query, chunks),
          (n) => (received += n),
        );
    } else {
      throw httpError(
        'unsupported_media_type',
        `unsupported media type ${JSON.stringify(type)}; send application/x-ndjson or application/json`,
      );
    }
  } catch (err) {
    if (err instanceof ChunkParseError)
      throw httpError('invalid_chunk', `${err.message}; ${received} chunk(s) before it were stored`, {
        chunks_received: received,
      });
    // A store that failed mid-body (say, Redis went away): say how much of the body was stored, with
    // the store's status and code as they were.
    if (err instanceof HttpError && err.status >= 500)
      throw relayedError(
        err.status,
        err.code,
        `${err.message}; ${received} chunk(s) of this request were stored before the failure`,
        { ...(err.details as object | undefined), chunks_received: received },
        err.headers,
      );
    throw err;
  }
  return c.json({ status: 'stream_processed', query, chunks_received: received }, 200);
}

/** Batches of an NDJSON body being written at once (see ingestNdjson). */
const MAX_IN_FLIGHT = 4;

/**
 * Streams an NDJSON body into the store with a few batches in flight: the next lines are read and
 * parsed while the store writes the previous ones, so a shared store's round trip does not idle
 * the body reader (one network read = one batch). The store applies a request's batches in the
 * order they were sent (one connection); `acked` counts what it acknowledged. Everything in flight
 * settles before an error (a bad line, a store failure) is reported, so the count is exact.
 */
async function ingestNdjson(
  body: AsyncIterable<Uint8Array>,
  append: (chunks: ChunkText[]) => Promise<unknown>,
  acked: (n: number) => void,
): Promise<void> {
  const inFlight: Promise<void>[] = [];
  try {
    await readNdjson(body, async (chunks) => {
      const p = append(chunks).then(() => acked(chunks.length));
      p.catch(() => {}); // awaited below; not an unhandled rejection meanwhile
      inFlight.push(p);
      if (inFlight.length >= MAX_IN_FLIGHT) await inFlight.shift();
    });
  } finally {
    await Promise.allSettled(inFlight);
  }
  await Promise.all(inFlight);
}

export const chunkRoutes: DomainRoutes<ChunkRouteDeps> = { mount: mountChunkRoutes };
