import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiter.ts';

/** setTimeout fires at once for delays above 2^31-1 ms; longer requeues are clamped to this. */
export const MAX_DELAY_MS = 2_147_483_647;

export interface WorkQueueHooks {
  onAdd?(key: string): void;
  onRetry?(key: string): void;
  /** Milliseconds a key waited in the queue before a worker took it. */
  onGet?(key: string, waitedMs: number): void;
}

/**
 * A keyed work queue with client-go semantics: a key is queued at most once (dirty set), never
 * handed to two workers at once (processing set), and a key added while it is being processed is
 * queued again when the worker calls `done`, so the change is reconciled once more. Delayed adds
 * keep the earliest deadline per key; rate-limited adds take their delay from the rate limiter.
 */
export class WorkQueue {
  private readonly queue: string[] = [];
  private head = 0;
  private readonly dirty = new Map<string, number>(); // key → enqueue time
  private readonly processing = new Set<string>();
  private readonly waiting = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly getters: Array<(key: string | undefined) => void> = [];
  private shuttingDown = false;
  readonly rateLimiter: RateLimiter;
  private readonly hooks: WorkQueueHooks;

  constructor(rateLimiter: RateLimiter = defaultControllerRateLimiter(), hooks: WorkQueueHooks = {}) {
    this.rateLimiter = rateLimiter;
    this.hooks = hooks;
  }

  /** Keys waiting for a worker (not those being processed or waiting for a delay). */
  get depth(): number {
    return this.queue.length - this.head;
  }

  get processingCount(): number {
    return this.processing.size;
  }

  get delayedCount(): number {
    return this.waiting.size;
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.hooks.onAdd?.(key);
    this.dirty.set(key, Date.now());
    if (this.processing.has(key)) return; // `done` queues it again
    const getter = this.getters.shift();
    if (getter) this.hand(key, getter);
    else this.queue.push(key);
  }

  addAfter(key: string, delayMs: number): void {
    if (this.shuttingDown) return;
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const at = Date.now() + Math.min(delayMs, MAX_DELAY_MS);
    const existing = this.waiting.get(key);
    if (existing && existing.at <= at) return;
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(() => {
      this.waiting.delete(key);
      this.add(key);
    }, at - Date.now());
    timer.unref?.();
    this.waiting.set(key, { at, timer });
  }

  /**
   * Drops the key's delayed add, if any: its object is gone, and a requeue scheduled for it (a TTL
   * up to a day away) would only hold a timer and the key until then — one per deleted object.
   */
  dropDelayed(key: string): void {
    const existing = this.waiting.get(key);
    if (!existing) return;
    clearTimeout(existing.timer);
    this.waiting.delete(key);
  }

  addRateLimited(key: string): void {
    this.hooks.onRetry?.(key);
    this.addAfter(key, this.rateLimiter.when(key));
  }

  /** Clears the key's failure history (after a success or a terminal error). */
  forget(key: string): void {
    this.rateLimiter.forget(key);
  }

  numRequeues(key: string): number {
    return this.rateLimiter.failures(key);
  }

  /** The next key, waiting until one is available; undefined once the queue is shut down. */
  get(): Promise<string | undefined> {
    if (this.depth > 0) {
      const key = this.queue[this.head++] as string;
      if (this.head > 1024 && this.head * 2 > this.queue.length) {
        this.queue.splice(0, this.head);
        this.head = 0;
      }
      return Promise.resolve(this.take(key));
    }
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.getters.push(resolve));
  }

  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.has(key) && !this.shuttingDown) {
      const getter = this.getters.shift();
      if (getter) this.hand(key, getter);
      else this.queue.push(key);
    }
  }

  /** Stops handing out keys: waiting getters get undefined, delayed adds are dropped. */
  shutDown(): void {
    this.shuttingDown = true;
    for (const { timer } of this.waiting.values()) clearTimeout(timer);
    this.waiting.clear();
    for (const g of this.getters.splice(0)) g(undefined);
    this.queue.length = 0;
    this.head = 0;
    this.dirty.clear();
  }

  private take(key: string): string {
    const queuedAt = this.dirty.get(key) ?? Date.now();
    this.dirty.delete(key);
    this.processing.add(key);
    this.hooks.onGet?.(key, Date.now() - queuedAt);
    return key;
  }

  private hand(key: string, getter: (key: string | undefined) => void): void {
    getter(this.take(key));
  }
}
