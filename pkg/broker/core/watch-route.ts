import type { Context } from 'hono';
import {
  alreadySent,
  eventFrame,
  type HubItem,
  lastEventId,
  openSse,
  type ReplayPage,
  type SseHub,
  watch,
} from '../../http/index.ts';
import type { Logger } from '../../log/index.ts';
import type { Entry } from './capped-log.ts';

export interface WatchDeps {
  hub: SseHub;
  logger: Logger;
  maxBufferedBytes: number;
}

/**
 * Where a watch starts: `Last-Event-ID` (a reconnecting EventSource) wins, then — for traces —
 * `from-beginning` over `cursor`, elsewhere `cursor` over `from-beginning`. Undefined = live only.
 */
export function watchStart(
  c: Context,
  q: { cursor?: number | undefined; 'from-beginning'?: boolean | undefined },
  fromBeginningWins = false,
): number | undefined {
  const resumed = lastEventId(c.req.header('last-event-id'));
  if (resumed !== undefined) return resumed;
  if (fromBeginningWins && q['from-beginning']) return 0;
  if (q.cursor !== undefined) return q.cursor;
  return q['from-beginning'] ? 0 : undefined;
}

/** What a live-only watch needs from a store to know where it starts. */
export interface HeadSource {
  /** This process's feed watermark: what its listeners have seen. */
  head(): number;
  /**
   * The shared store's committed position (durable backends): every write acknowledged by any
   * replica has a sequence at or below it. Rejects with 503 while the store is unreachable.
   */
  committedHead?(): Promise<number>;
}

/**
 * Where a live-only watch starts. A replica's feed may lag behind a write another replica has
 * already acknowledged; starting at the feed's watermark would push that earlier write to the new
 * watcher when the feed catches up. So a durable store is asked for its committed position at the
 * moment the watch opens (before the SSE response opens, so an outage is a clear 503), and feed
 * items at or below it are dropped by the subscription. A replaying watch (`after` set) needs none.
 */
export async function watchHead(after: number | undefined, store: HeadSource): Promise<number> {
  if (after !== undefined || !store.committedHead) return store.head();
  return Math.max(store.head(), await store.committedHead());
}

/** History entries as hub items (framed per replay; live items are framed once by the hub). */
export function replayOf<E extends Entry, M>(
  page: (after: number, limit: number) => E[] | Promise<E[]>,
  meta: (e: E) => M,
): ReplayPage<M> {
  return async (after, limit) => {
    const entries = await page(after, limit);
    return entries.map((e): HubItem<M> => ({ seq: e.seq, frame: eventFrame(e.seq, e.json), meta: meta(e) }));
  };
}

/** Serves `watch=true`: opens the SSE response and runs replay-then-live on the hub topic. */
export function serveWatch<M>(
  c: Context,
  deps: WatchDeps,
  opts: {
    topic: string;
    after: number | undefined;
    head: number;
    replay: ReplayPage<M>;
    filter?: (m: M) => boolean;
  },
): Response {
  const sink = openSse(c, deps.maxBufferedBytes, deps.hub.scheduler);
  watch({ hub: deps.hub, sink, ...opts }).catch((err: unknown) => {
    deps.logger.warn({ err, topic: opts.topic }, 'watch failed; closing the stream');
    sink.close('server');
  });
  return alreadySent();
}
