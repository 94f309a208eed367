/**
 * Delivery of operation events to the broker (`POST /events`) off the query's path: enqueue never
 * blocks or throws. Events are kept per query in a lane that is sent in order (so a Start never lands
 * after its Complete) and what queued behind a request in flight goes out as one array, lanes of
 * different queries go out concurrently, the whole queue is bounded, and
 * what could not be delivered is counted (`dropped`: queue full or closed, `failed`: retries exhausted)
 * so the controller can export it as a metric instead of losing events silently.
 */
import type { Logger } from '../log/index.ts';
import { describeNetworkError, type PostJson } from './http.ts';

export interface BrokerEvent {
  timestamp: string;
  eventType: 'Normal' | 'Warning';
  reason: string;
  message: string;
  data: Record<string, string>;
}

export interface EventQueueOptions {
  url: string;
  /** Sends one JSON body, resolving with the HTTP status (throws on network errors). */
  post: PostJson;
  logger: Logger;
  /** Events held at most (queued, not yet sent); beyond it new events are dropped and counted. */
  capacity?: number;
  /** Queries whose events are sent at the same time. */
  concurrency?: number;
  /** Attempts per event on network errors, 429 and 5xx. */
  maxAttempts?: number;
  retryBaseMs?: number;
  /** Events of one query sent in one request at most (the broker takes arrays of up to 1000). */
  batchSize?: number;
}

export interface EventQueueStats {
  queued: number;
  inFlight: number;
  sent: number;
  /** Refused because the queue was full or closed. */
  dropped: number;
  /** Given up after `maxAttempts` or refused by the broker with a 4xx. */
  failed: number;
}

export class EventQueue {
  readonly #opts: Required<Omit<EventQueueOptions, 'logger' | 'post' | 'url'>>;
  readonly #url: string;
  readonly #post: PostJson;
  readonly #log: Logger;
  readonly #lanes = new Map<string, BrokerEvent[]>();
  readonly #ready: string[] = [];
  readonly #active = new Set<string>();
  readonly #idle: Array<() => void> = [];
  readonly #stats: EventQueueStats = { queued: 0, inFlight: 0, sent: 0, dropped: 0, failed: 0 };
  #closed = false;
  #lastDropLog = 0;

  constructor(opts: EventQueueOptions) {
    this.#url = `${opts.url.replace(/\/+$/, '')}/events`;
    this.#post = opts.post;
    this.#log = opts.logger;
    this.#opts = {
      capacity: opts.capacity ?? 10_000,
      concurrency: opts.concurrency ?? 8,
      maxAttempts: opts.maxAttempts ?? 3,
      retryBaseMs: opts.retryBaseMs ?? 200,
      batchSize: opts.batchSize ?? 100,
    };
  }

  /** Queues one event of a query; false when it was dropped (counted in `stats().dropped`). */
  enqueue(key: string, event: BrokerEvent): boolean {
    if (this.#closed || this.#stats.queued >= this.#opts.capacity) {
      this.#stats.dropped++;
      this.#warnDropped(event.reason);
      return false;
    }
    let lane = this.#lanes.get(key);
    if (!lane) {
      lane = [];
      this.#lanes.set(key, lane);
      if (!this.#active.has(key)) this.#ready.push(key);
    }
    lane.push(event);
    this.#stats.queued++;
    this.#pump();
    return true;
  }

  stats(): EventQueueStats {
    return { ...this.#stats };
  }

  /** Resolves once everything queued so far was sent or given up. */
  flush(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Refuses new events and waits for the queued ones. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.flush();
  }

  #isIdle(): boolean {
    return this.#stats.queued === 0 && this.#active.size === 0;
  }

  #pump(): void {
    while (this.#active.size < this.#opts.concurrency && this.#ready.length > 0) {
      const key = this.#ready.shift() as string;
      this.#active.add(key);
      void this.#drain(key);
    }
  }

  async #drain(key: string): Promise<void> {
    const lane = this.#lanes.get(key);
    while (lane && lane.length > 0) {
      // What queued up behind the request in flight goes out together, still in order.
      const batch = lane.splice(0, this.#opts.batchSize);
      this.#stats.queued -= batch.length;
      this.#stats.inFlight += batch.length;
      const ok = await this.#send(batch);
      this.#stats.inFlight -= batch.length;
      if (ok) this.#stats.sent += batch.length;
      else this.#stats.failed += batch.length;
    }
    this.#lanes.delete(key);
    this.#active.delete(key);
    this.#pump();
    if (this.#isIdle()) for (const resolve of this.#idle.splice(0)) resolve();
  }

  async #send(batch: BrokerEvent[]): Promise<boolean> {
    const body = JSON.stringify(batch.length === 1 ? batch[0] : batch);
    const reason = batch.map((e) => e.reason).join(',');
    for (let attempt = 1; ; attempt++) {
      let problem: string;
      try {
        const status = await this.#post(this.#url, body);
        if (status >= 200 && status < 300) return true;
        problem = `HTTP ${status}`;
        if (status < 500 && status !== 429) {
          this.#log.warn({ reason, status }, 'broker refused an event');
          return false;
        }
      } catch (err) {
        problem = describeNetworkError(err);
      }
      if (attempt >= this.#opts.maxAttempts) {
        this.#log.warn({ reason, problem, attempts: attempt }, 'event not delivered to the broker');
        return false;
      }
      await new Promise((r) => setTimeout(r, this.#opts.retryBaseMs * 2 ** (attempt - 1)));
    }
  }

  #warnDropped(reason: string): void {
    // One line per second at most: a full queue under load would otherwise flood the log too.
    const now = Date.now();
    if (now - this.#lastDropLog < 1000) return;
    this.#lastDropLog = now;
    this.#log.warn(
      { reason, dropped: this.#stats.dropped, capacity: this.#opts.capacity },
      'event queue full',
    );
  }
}
