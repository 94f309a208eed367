/**
 * Delivery of operation events to the broker (`POST /events`) off the query's path: enqueue never
 * blocks or throws. Events are kept per query in a lane; what is queued goes out as one array,
 * gathered across queries, a short linger after the first event (or at once when a batch is full,
 * or when someone flushes, or when a query ends), so a loaded engine sends one request for several
 * queries instead of two per query. A lane is in at most one request at a time, so a query's events
 * arrive in order (a Start never lands after its Complete). Requests in flight and the whole queue
 * are bounded, and what could not be delivered is counted (`dropped`: queue full or closed, `failed`: retries exhausted or
 * refused) so the controller can export it as a metric instead of losing events silently.
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
  /** Requests in flight at most. */
  concurrency?: number;
  /** Attempts per event on network errors, 429 and 5xx. */
  maxAttempts?: number;
  retryBaseMs?: number;
  /** Events sent in one request at most (the broker takes arrays of up to 1000). */
  batchSize?: number;
  /** How long the first queued event waits for company before its batch goes out (0: at once). */
  lingerMs?: number;
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

/** A batch on its way: its events and the lanes they were taken from (busy until it settles). */
interface Batch {
  events: BrokerEvent[];
  keys: string[];
}

export class EventQueue {
  readonly #opts: Required<Omit<EventQueueOptions, 'logger' | 'post' | 'url'>>;
  readonly #url: string;
  readonly #post: PostJson;
  readonly #log: Logger;
  readonly #lanes = new Map<string, BrokerEvent[]>();
  /** Lanes with queued events and no request in flight, oldest first. */
  readonly #ready = new Set<string>();
  /** Lanes with a request in flight. */
  readonly #busy = new Set<string>();
  /** Busy lanes whose query ended: what queued behind the request in flight follows it at once. */
  readonly #urgent = new Set<string>();
  readonly #idle: Array<() => void> = [];
  readonly #stats: EventQueueStats = { queued: 0, inFlight: 0, sent: 0, dropped: 0, failed: 0 };
  #requests = 0;
  #timer: NodeJS.Timeout | undefined;
  /** Someone waits for the queue to drain: no lingering until it has. */
  #hurry = false;
  /** A linger ended while every request slot was taken: what waits goes as soon as one frees. */
  #due = false;
  #closed = false;
  #lastDropLog = 0;

  constructor(opts: EventQueueOptions) {
    this.#url = `${opts.url.replace(/\/+$/, '')}/events`;
    this.#post = opts.post;
    this.#log = opts.logger;
    this.#opts = {
      capacity: opts.capacity ?? 10_000,
      concurrency: opts.concurrency ?? 4,
      maxAttempts: opts.maxAttempts ?? 3,
      retryBaseMs: opts.retryBaseMs ?? 200,
      batchSize: opts.batchSize ?? 500,
      lingerMs: opts.lingerMs ?? 25,
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
    }
    lane.push(event);
    if (!this.#busy.has(key)) this.#ready.add(key);
    this.#stats.queued++;
    this.#schedule();
    return true;
  }

  /** Sends a query's queued events (and whatever else waits) without lingering: the query ended. */
  sendNow(key: string): void {
    if (this.#ready.has(key)) this.#pump();
    else if (this.#busy.has(key)) this.#urgent.add(key);
  }

  stats(): EventQueueStats {
    return { ...this.#stats };
  }

  /** Resolves once everything queued so far was sent or given up; sends what lingers at once. */
  flush(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve();
    this.#hurry = true;
    this.#pump();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Refuses new events and waits for the queued ones. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.flush();
  }

  #isIdle(): boolean {
    return this.#stats.queued === 0 && this.#requests === 0;
  }

  /** Sends now when a batch is full (or someone waits), else once the linger is over. */
  #schedule(): void {
    if (this.#ready.size === 0) return;
    const now =
      this.#due || this.#hurry || this.#opts.lingerMs <= 0 || this.#stats.queued >= this.#opts.batchSize;
    if (now) {
      this.#pump();
      return;
    }
    if (this.#timer) return;
    this.#timer = setTimeout(() => this.#pump(), this.#opts.lingerMs);
    // Lingering events must not keep a process alive that has nothing else to do; close() flushes.
    this.#timer.unref();
  }

  #pump(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    while (this.#requests < this.#opts.concurrency && this.#ready.size > 0) {
      this.#requests++;
      void this.#deliver(this.#take());
    }
    this.#due = this.#ready.size > 0;
  }

  /** Up to batchSize events from the ready lanes, oldest lane first, each lane's in order. */
  #take(): Batch {
    const batch: Batch = { events: [], keys: [] };
    for (const key of this.#ready) {
      const lane = this.#lanes.get(key) as BrokerEvent[];
      const room = this.#opts.batchSize - batch.events.length;
      for (const e of lane.length <= room ? lane.splice(0) : lane.splice(0, room)) batch.events.push(e);
      this.#ready.delete(key);
      this.#busy.add(key);
      batch.keys.push(key);
      if (batch.events.length >= this.#opts.batchSize) break;
    }
    return batch;
  }

  async #deliver({ events, keys }: Batch): Promise<void> {
    this.#stats.queued -= events.length;
    this.#stats.inFlight += events.length;
    const sent = await this.#send(events);
    this.#stats.inFlight -= events.length;
    this.#stats.sent += sent;
    this.#stats.failed += events.length - sent;
    this.#requests--;
    let urgent = false;
    for (const key of keys) {
      this.#busy.delete(key);
      const waiting = !!this.#lanes.get(key)?.length;
      if (waiting) this.#ready.add(key);
      else this.#lanes.delete(key);
      if (this.#urgent.delete(key) && waiting) urgent = true;
    }
    if (this.#isIdle()) {
      this.#hurry = false;
      for (const resolve of this.#idle.splice(0)) resolve();
    } else if (urgent) this.#pump();
    else this.#schedule();
  }

  /**
   * Sends a batch; resolves with how many of its events were stored. The broker validates a batch
   * as a whole, so when it refuses one of several events, each is sent alone and only the bad one
   * is lost, not its neighbours from other queries.
   */
  async #send(events: BrokerEvent[]): Promise<number> {
    const status = await this.#attempt(events);
    if (status === 'refused' && events.length > 1) {
      let sent = 0;
      for (const e of events) if ((await this.#attempt([e])) === 'stored') sent++;
      return sent;
    }
    return status === 'stored' ? events.length : 0;
  }

  async #attempt(batch: BrokerEvent[]): Promise<'stored' | 'refused' | 'failed'> {
    const body = JSON.stringify(batch.length === 1 ? batch[0] : batch);
    for (let attempt = 1; ; attempt++) {
      let problem: string;
      try {
        const status = await this.#post(this.#url, body);
        if (status >= 200 && status < 300) return 'stored';
        problem = `HTTP ${status}`;
        if (status < 500 && status !== 429) {
          if (batch.length === 1)
            this.#log.warn({ reason: batch[0]?.reason, status }, 'broker refused an event');
          return 'refused';
        }
      } catch (err) {
        problem = describeNetworkError(err);
      }
      if (attempt >= this.#opts.maxAttempts) {
        this.#log.warn(
          { reasons: reasonsOf(batch), events: batch.length, problem, attempts: attempt },
          'events not delivered to the broker',
        );
        return 'failed';
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

/** The distinct reasons of a batch, for a log line that stays short however large the batch. */
function reasonsOf(batch: BrokerEvent[]): string {
  const reasons = [...new Set(batch.map((e) => e.reason))];
  return reasons.length > 5 ? `${reasons.slice(0, 5).join(',')},…` : reasons.join(',');
}
