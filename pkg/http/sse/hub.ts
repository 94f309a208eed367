import { FlushScheduler } from './flush.ts';
import { eventFrame, HEARTBEAT_FRAME } from './frame.ts';
import type { CloseReason, SseSink } from './sink.ts';

/** A published item: its sequence, the bytes every subscriber receives, and what filters look at. */
export interface HubItem<M = unknown> {
  seq: number;
  frame: Buffer;
  meta: M;
}

export interface SubscribeOptions<M> {
  sink: SseSink;
  /** Items this subscriber wants; absent = all of the topic. */
  filter?: (meta: M) => boolean;
  /** Custom delivery (e.g. re-chunking); default writes `item.frame` to the sink. */
  deliver?: (item: HubItem<M>) => void;
  /** Live items buffered while the subscriber replays history; past it the replay is re-run. */
  maxPending?: number;
}

/**
 * A subscription starts paused: live items queue (bounded) while history is replayed, then `goLive`
 * flushes what the replay did not already cover. Any item at or below the last sequence sent is
 * dropped, so replay-then-live has neither a gap nor a duplicate.
 */
export class Subscription<M = unknown> {
  readonly sink: SseSink;
  lastSeq: number;
  #live = false;
  #pending: HubItem<M>[] = [];
  #overflowed = false;
  readonly #opts: SubscribeOptions<M>;

  constructor(opts: SubscribeOptions<M>, lastSeq: number) {
    this.sink = opts.sink;
    this.#opts = opts;
    this.lastSeq = lastSeq;
  }

  offer(item: HubItem<M>): void {
    if (this.#opts.filter && !this.#opts.filter(item.meta)) return;
    if (!this.#live) {
      if (this.#pending.length >= (this.#opts.maxPending ?? 10_000)) {
        // Too much arrived during replay: forget it; the replay loop fetches it from the store.
        this.#overflowed = true;
        this.#pending = [];
      } else this.#pending.push(item);
      return;
    }
    this.#send(item);
  }

  /** Sends a replayed item (history), keeping the dedupe watermark. */
  replayed(item: HubItem<M>): void {
    this.#send(item);
  }

  /** True when live items were lost during replay and history must be read again from `lastSeq`. */
  takeOverflow(): boolean {
    const o = this.#overflowed;
    this.#overflowed = false;
    return o;
  }

  goLive(): void {
    this.#live = true;
    const pending = this.#pending;
    this.#pending = [];
    for (const item of pending) this.#send(item);
  }

  #send(item: HubItem<M>): void {
    if (item.seq <= this.lastSeq || this.sink.closed) return;
    this.lastSeq = item.seq;
    if (this.#opts.deliver) this.#opts.deliver(item);
    else this.sink.write(item.frame);
  }
}

// biome-ignore lint/suspicious/noExplicitAny: a topic holds subscriptions whatever their meta type
type AnySubscription = Subscription<any>;

export interface HubOptions {
  heartbeatMs: number;
  /** Write-coalescing window of the sinks opened for this hub (0 = write every frame at once). */
  flushMs?: number;
}

/**
 * The process-wide SSE fan-out: per topic a set of subscriptions. An item is framed once, on
 * publish, and only if someone listens; every subscriber gets the same bytes. Closed sinks leave at
 * once (they unsubscribe themselves on close). One timer sends every heartbeat.
 */
export class SseHub {
  readonly #topics = new Map<string, Set<AnySubscription>>();
  readonly #sinks = new Set<SseSink>();
  readonly #timer: NodeJS.Timeout;
  #disconnectedSlow = 0;

  /** Shared by every sink of this hub (pass to `openSse`). */
  readonly scheduler: FlushScheduler | undefined;

  constructor(opts: HubOptions) {
    this.scheduler = opts.flushMs ? new FlushScheduler(opts.flushMs) : undefined;
    this.#timer = setInterval(() => {
      for (const s of this.#sinks) s.write(HEARTBEAT_FRAME);
    }, opts.heartbeatMs);
    this.#timer.unref();
  }

  hasSubscribers(topic: string): boolean {
    return (this.#topics.get(topic)?.size ?? 0) > 0;
  }

  subscribe<M>(topic: string, opts: SubscribeOptions<M>, lastSeq: number): Subscription<M> {
    const sub = new Subscription<M>(opts, lastSeq);
    let set = this.#topics.get(topic);
    if (!set) {
      set = new Set();
      this.#topics.set(topic, set);
    }
    set.add(sub);
    this.#sinks.add(opts.sink);
    opts.sink.onClose((why: CloseReason) => {
      if (why === 'slow') this.#disconnectedSlow++;
      this.#sinks.delete(opts.sink);
      const s = this.#topics.get(topic);
      s?.delete(sub);
      if (s && s.size === 0) this.#topics.delete(topic);
    });
    return sub;
  }

  /** Frames `json` once (lazily: `json` may be a thunk) and offers it to every subscriber of `topic`. */
  publish<M>(topic: string, seq: number, meta: M, json: string | (() => string)): void {
    const set = this.#topics.get(topic);
    if (!set || set.size === 0) return;
    const item: HubItem<M> = { seq, meta, frame: eventFrame(seq, typeof json === 'string' ? json : json()) };
    for (const sub of set) sub.offer(item);
  }

  /** Ends every stream (shutdown). */
  closeAll(): void {
    for (const s of [...this.#sinks]) s.close('server');
  }

  /**
   * Ends every stream when the shutdown grace period is over: `frame` (an error event) and then each
   * sink's own `shutdownTail` (e.g. `[DONE]`), so no reader mistakes the end for a network failure.
   */
  endAll(frame: Uint8Array): void {
    for (const s of [...this.#sinks]) s.close('server', [frame, ...s.shutdownTail]);
  }

  /**
   * Ends the streams of every topic whose name starts with `prefix` (what they follow was purged):
   * `frame` (an error event), then each sink's own `shutdownTail`. Returns how many ended.
   */
  endTopics(prefix: string, frame: Uint8Array): number {
    let ended = 0;
    for (const [topic, subs] of [...this.#topics]) {
      if (!topic.startsWith(prefix)) continue;
      for (const sub of [...subs]) {
        sub.sink.close('server', [frame, ...sub.sink.shutdownTail]);
        ended++;
      }
    }
    return ended;
  }

  /** Subscribers per topic (for metrics). */
  topicSizes(): Array<[topic: string, subscribers: number]> {
    return [...this.#topics].map(([topic, subs]) => [topic, subs.size]);
  }

  stats(): { subscribers: number; topics: number; disconnectedSlow: number } {
    return {
      subscribers: this.#sinks.size,
      topics: this.#topics.size,
      disconnectedSlow: this.#disconnectedSlow,
    };
  }

  stop(): void {
    clearInterval(this.#timer);
    this.closeAll();
  }
}
