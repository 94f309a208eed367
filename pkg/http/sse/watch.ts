import type { HubItem, SseHub, SubscribeOptions, Subscription } from './hub.ts';

/** A page of history: items after a sequence, oldest first. */
export type ReplayPage<M> = (afterSeq: number, limit: number) => HubItem<M>[] | Promise<HubItem<M>[]>;

export interface WatchOptions<M> extends SubscribeOptions<M> {
  hub: SseHub;
  topic: string;
  /** Exclusive start: history after this sequence is replayed; undefined = live only. */
  after: number | undefined;
  /** The current last sequence of the domain (start point of a live-only watch). */
  head: number;
  replay: ReplayPage<M>;
  pageSize?: number;
}

/**
 * Replay-then-live: subscribe first (live items queue), replay history page by page (waiting for
 * the socket to drain between pages), then go live; items already sent are dropped by sequence.
 * Live items lost to an overflow during replay are re-read from the store before going live.
 */
export async function watch<M>(opts: WatchOptions<M>): Promise<Subscription<M>> {
  const start = opts.after ?? opts.head;
  const sub = opts.hub.subscribe(opts.topic, opts, start);
  if (opts.after !== undefined) {
    const size = opts.pageSize ?? 500;
    for (;;) {
      const page = await opts.replay(sub.lastSeq, size);
      for (const item of page) sub.replayed(item);
      if (opts.sink.closed) return sub;
      if (page.length === size || sub.takeOverflow()) {
        await opts.sink.drained();
        continue;
      }
      break;
    }
  }
  sub.goLive();
  return sub;
}
