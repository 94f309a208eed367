import type { Context } from 'hono';
import {
  alreadySent,
  DONE_FRAME,
  eventFrame,
  type HubItem,
  lastEventId,
  openSse,
  type SseSink,
  watch,
} from '../../http/index.ts';
import type { WatchDeps } from '../core/watch-route.ts';
import { needsSplit, splitChunk } from './split.ts';
import { queryTopic } from './topics.ts';
import { type ChunkStore, chunkJson, type StoredChunk, type StreamState } from './types.ts';

const EMPTY = Buffer.alloc(0);

export interface QueryStreamOptions {
  fromBeginning: boolean;
  /** wait-for-query seconds (already clamped), or undefined to require a known query. */
  waitSeconds: number | undefined;
  maxChunkSize: number | undefined;
  idleMs: number;
  /** Where a live-only reader starts (`watchHead`: the store's committed position, read by the route). */
  head: number;
}

const errorFrame = (message: string, code: string, type = 'timeout_error') =>
  eventFrame(undefined, JSON.stringify({ error: { message, type, code } }));

/**
 * What a query stream still open gets when the chunks are purged (`DELETE /stream`, on any
 * replica), before its `[DONE]`: what it was following is gone, so it ends now instead of waiting
 * for the idle timeout.
 */
export const PURGED_FRAME = errorFrame(
  'the chunks of this stream were purged (DELETE /stream); the stream was closed',
  'purged',
  'server_error',
);

/** Frames of pieces written between waits for the socket (a split chunk can be megabytes of frames). */
const PIECES_BEFORE_DRAIN_BYTES = 64 * 1024;

/**
 * Writes the pieces of a split chunk as they are made, waiting for the socket every
 * PIECES_BEFORE_DRAIN_BYTES; stops as soon as the reader is gone. Only the last piece carries the
 * id, so a resume never skips the rest of a split chunk.
 */
export async function writePieces(sink: SseSink, pieces: Iterator<Record<string, unknown>>, seq: number) {
  let written = 0;
  let current = pieces.next();
  while (!current.done) {
    const next = pieces.next();
    const frame = eventFrame(next.done ? seq : undefined, JSON.stringify(current.value));
    if (!sink.write(frame)) return;
    written += frame.length;
    if (written >= PIECES_BEFORE_DRAIN_BYTES) {
      written = 0;
      await sink.drained();
      if (sink.closed) return;
    }
    current = next;
  }
}

/**
 * `GET /stream/{query}`: the query's chunks as `data: <chunk>` frames, ending with `[DONE]` on
 * completion or after an error chunk. Waits up to wait-for-query seconds for a query that has not
 * started, and ends a stream that stays silent longer than the idle timeout, with an error frame
 * then `[DONE]` in both cases — a reader is never left hanging.
 */
export function serveQueryStream(
  c: Context,
  deps: WatchDeps,
  store: ChunkStore,
  query: string,
  /** The stream's state as the route read it (undefined: not started yet). */
  state: StreamState | undefined,
  opts: QueryStreamOptions,
): Response {
  const sink = openSse(c, deps.maxBufferedBytes, deps.hub.scheduler);
  // Ended by a shutdown, it still ends like every query stream: an error frame, then [DONE].
  sink.shutdownTail = [DONE_FRAME];
  const finish = (last: Buffer[]) => sink.close('done', last);
  // One timer, re-armed with `refresh()` per chunk (no new timer object for every chunk of every
  // stream): first the wait for the query to start, then the idle timeout.
  let timer: NodeJS.Timeout | undefined;
  let onFire = () => {};
  let armedMs = 0;
  const arm = (ms: number, fire: () => void) => {
    onFire = fire;
    if (timer && armedMs === ms) timer.refresh();
    else {
      clearTimeout(timer);
      armedMs = ms;
      timer = setTimeout(() => onFire(), ms);
      timer.unref();
    }
  };
  const idleEnd = () =>
    finish([
      errorFrame(`no chunk for ${Math.round(opts.idleMs / 1000)} s; the stream was closed`, 'idle_timeout'),
      DONE_FRAME,
    ]);
  const idle = () => arm(opts.idleMs, idleEnd);
  sink.onClose(() => clearTimeout(timer));

  // While a split chunk is being written (waiting for the socket between pieces), what arrives is
  // held here in order, up to the sink's own buffer bound.
  let held: HubItem<StoredChunk>[] | undefined;
  let heldBytes = 0;
  const settle = (e: StoredChunk) => {
    if (e.isError) finish([DONE_FRAME]);
    else idle();
  };
  const deliverNow = (item: HubItem<StoredChunk>): Promise<void> | undefined => {
    const e = item.meta;
    if (e.kind === 'complete') return void finish([DONE_FRAME]);
    const json = chunkJson(e);
    if (opts.maxChunkSize !== undefined && json.length > opts.maxChunkSize) {
      const chunk = JSON.parse(json) as Record<string, unknown>;
      if (needsSplit(chunk, opts.maxChunkSize)) {
        clearTimeout(timer);
        timer = undefined;
        return writePieces(sink, splitChunk(chunk, opts.maxChunkSize), e.seq).then(() => settle(e));
      }
    }
    sink.write(item.frame.length ? item.frame : eventFrame(e.seq, json));
    settle(e);
    return undefined;
  };
  const drainHeld = async (first: Promise<void>) => {
    await first;
    while (held?.length && !sink.closed) {
      const next = held.shift() as HubItem<StoredChunk>;
      heldBytes -= next.meta.json.length;
      await deliverNow(next);
    }
    held = undefined;
    heldBytes = 0;
  };
  const deliver = (item: HubItem<StoredChunk>) => {
    if (sink.closed) return;
    if (held) {
      held.push(item);
      heldBytes += item.meta.json.length;
      if (heldBytes > deps.maxBufferedBytes) sink.close('slow');
      return;
    }
    const writing = deliverNow(item);
    if (writing) {
      held = [];
      drainHeld(writing).catch((err: unknown) => {
        deps.logger.warn({ err, query }, 'query stream failed');
        sink.close('server');
      });
    }
  };

  const resumed = lastEventId(c.req.header('last-event-id'));
  const after = resumed ?? (opts.fromBeginning ? (state?.runAfter ?? 0) : undefined);
  if (state) idle();
  else
    arm((opts.waitSeconds ?? 0) * 1000, () =>
      finish([
        errorFrame(`query ${JSON.stringify(query)} did not start within ${opts.waitSeconds} s`, 'timeout'),
        DONE_FRAME,
      ]),
    );

  watch<StoredChunk>({
    hub: deps.hub,
    topic: queryTopic(query),
    sink,
    after,
    head: opts.head,
    deliver,
    // `deliver` frames from the record itself, so replayed items need no frame of their own.
    replay: async (from, n) =>
      (await store.page(query, from, n)).items.map((e) => ({ seq: e.seq, frame: EMPTY, meta: e })),
  })
    .then(async () => {
      // A live-only reader of a stream that already completed gets [DONE] at once. Read again after
      // subscribing: a completion between the route's read and the subscription is not missed.
      if (after === undefined && (await store.state(query))?.completed) finish([DONE_FRAME]);
    })
    .catch((err: unknown) => {
      deps.logger.warn({ err, query }, 'query stream failed');
      sink.close('server');
    });
  return alreadySent();
}
