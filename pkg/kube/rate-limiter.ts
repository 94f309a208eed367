/** How long to wait before retrying a key (client-go's workqueue.RateLimiter). */
export interface RateLimiter {
  when(key: string): number;
  forget(key: string): void;
  failures(key: string): number;
}

/** Per-key exponential backoff: `baseMs · 2^failures`, capped (client-go default 5 ms → 1000 s). */
export class ItemExponentialRateLimiter implements RateLimiter {
  private readonly counts = new Map<string, number>();
  private readonly baseMs: number;
  private readonly maxMs: number;

  constructor(baseMs = 5, maxMs = 1_000_000) {
    this.baseMs = baseMs;
    this.maxMs = maxMs;
  }

  when(key: string): number {
    const n = this.counts.get(key) ?? 0;
    this.counts.set(key, n + 1);
    return Math.min(this.maxMs, this.baseMs * 2 ** Math.min(n, 40));
  }

  forget(key: string): void {
    this.counts.delete(key);
  }

  failures(key: string): number {
    return this.counts.get(key) ?? 0;
  }
}

/**
 * A global token bucket (client-go default 10 per second, burst 100) shared by all keys, so a storm
 * of failures cannot hammer the API server. `when` reserves a token and returns the wait until it is
 * available; reservations can go into debt, which spaces later retries out evenly.
 */
export class TokenBucketRateLimiter implements RateLimiter {
  private tokens: number;
  private last: number;
  private readonly perSecond: number;
  private readonly burst: number;
  private readonly now: () => number;

  constructor(perSecond = 10, burst = 100, now: () => number = Date.now) {
    this.perSecond = perSecond;
    this.burst = burst;
    this.tokens = burst;
    this.now = now;
    this.last = now();
  }

  when(): number {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) / 1000) * this.perSecond);
    this.last = t;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens / this.perSecond) * 1000);
  }

  forget(): void {}

  failures(): number {
    return 0;
  }
}

/** The longest wait of several limiters (client-go's MaxOfRateLimiter). */
export class MaxOfRateLimiter implements RateLimiter {
  private readonly limiters: RateLimiter[];

  constructor(...limiters: RateLimiter[]) {
    this.limiters = limiters;
  }

  when(key: string): number {
    return Math.max(0, ...this.limiters.map((l) => l.when(key)));
  }

  forget(key: string): void {
    for (const l of this.limiters) l.forget(key);
  }

  failures(key: string): number {
    return Math.max(0, ...this.limiters.map((l) => l.failures(key)));
  }
}

export interface RateLimitOptions {
  baseDelayMs?: number;
  maxDelayMs?: number;
  qps?: number;
  burst?: number;
}

/** controller-runtime's default: per-key 5 ms → 1000 s under a 10 qps / 100 burst bucket. */
export function defaultControllerRateLimiter(o: RateLimitOptions = {}): RateLimiter {
  return new MaxOfRateLimiter(
    new ItemExponentialRateLimiter(o.baseDelayMs ?? 5, o.maxDelayMs ?? 1_000_000),
    new TokenBucketRateLimiter(o.qps ?? 10, o.burst ?? 100),
  );
}
