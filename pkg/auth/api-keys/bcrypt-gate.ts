/**
 * Bounds the bcrypt work that wrong secrets can cause. A comparison costs ~70 ms of CPU at cost 10,
 * and anyone who knows a public key (it is not a secret: it names the key in URLs and logs) can
 * send new wrong secrets as fast as the network allows. Two bounds, both answered without hashing:
 *
 * - per public key, a token bucket of attempts not known to succeed (default 10, refilled one per
 *   6 s): a correct secret gives its token back, so only failures and attempts in flight count;
 * - overall, at most `maxConcurrent` comparisons at once (default 1, on worker threads) and at
 *   most `maxQueued` waiting (default 32); past that, new attempts are refused at once.
 *
 * A key pair already verified never reaches the gate (the verified-key cache answers first), so a
 * legitimate client of a key under attack keeps working.
 */
import { Limiter } from '../../http/limiter/index.ts';

export interface BcryptGateOptions {
  maxConcurrent?: number;
  maxQueued?: number;
  perKeyBurst?: number;
  perKeyRefillMs?: number;
  /** Buckets kept (oldest dropped first); only keys that exist reach the gate. */
  maxTrackedKeys?: number;
  now?: () => number;
  /** The comparison itself (default: bcryptjs on a worker thread, from the caller). */
  compare: (secret: string, hash: string) => Promise<boolean>;
}

export type GateOutcome =
  | { kind: 'compared'; ok: boolean }
  | { kind: 'limited'; scope: 'key' | 'overall'; retryAfterSec: number };

interface Bucket {
  tokens: number;
  at: number;
}

export const GATE_DEFAULTS = {
  maxConcurrent: 1,
  maxQueued: 32,
  perKeyBurst: 10,
  perKeyRefillMs: 6000,
  maxTrackedKeys: 10_000,
} as const;

export class BcryptGate {
  readonly stats = { compares: 0, limitedPerKey: 0, limitedOverall: 0 };
  private readonly o: Required<Omit<BcryptGateOptions, 'compare' | 'now'>>;
  private readonly now: () => number;
  private readonly doCompare: BcryptGateOptions['compare'];
  private readonly buckets = new Map<string, Bucket>();
  private readonly slots: Limiter;

  constructor(opts: BcryptGateOptions) {
    this.o = {
      maxConcurrent: Math.max(1, opts.maxConcurrent ?? GATE_DEFAULTS.maxConcurrent),
      maxQueued: Math.max(0, opts.maxQueued ?? GATE_DEFAULTS.maxQueued),
      perKeyBurst: Math.max(1, opts.perKeyBurst ?? GATE_DEFAULTS.perKeyBurst),
      perKeyRefillMs: Math.max(1, opts.perKeyRefillMs ?? GATE_DEFAULTS.perKeyRefillMs),
      maxTrackedKeys: Math.max(1, opts.maxTrackedKeys ?? GATE_DEFAULTS.maxTrackedKeys),
    };
    this.now = opts.now ?? Date.now;
    this.doCompare = opts.compare;
    this.slots = new Limiter(this.o.maxConcurrent);
  }

  async compare(publicKey: string, secret: string, hash: string): Promise<GateOutcome> {
    const bucket = this.bucket(publicKey);
    if (bucket.tokens < 1) {
      this.stats.limitedPerKey++;
      const waitMs = (1 - bucket.tokens) * this.o.perKeyRefillMs;
      return { kind: 'limited', scope: 'key', retryAfterSec: Math.max(1, Math.ceil(waitMs / 1000)) };
    }
    if (this.slots.active >= this.slots.max && this.slots.waiting >= this.o.maxQueued) {
      this.stats.limitedOverall++;
      return { kind: 'limited', scope: 'overall', retryAfterSec: 1 };
    }
    bucket.tokens -= 1;
    const release = await this.slots.acquire();
    let ok = false;
    try {
      this.stats.compares++;
      ok = await this.doCompare(secret, hash);
    } finally {
      release();
    }
    if (ok) this.refund(publicKey, bucket);
    return { kind: 'compared', ok };
  }

  /** Attempts waiting for a comparison slot (for tests and metrics). */
  get queued(): number {
    return this.slots.waiting;
  }

  private bucket(publicKey: string): Bucket {
    const now = this.now();
    let b = this.buckets.get(publicKey);
    if (!b) {
      b = { tokens: this.o.perKeyBurst, at: now };
      this.buckets.set(publicKey, b);
      if (this.buckets.size > this.o.maxTrackedKeys) {
        const oldest = this.buckets.keys().next().value;
        if (oldest !== undefined) this.buckets.delete(oldest);
      }
      return b;
    }
    b.tokens = Math.min(this.o.perKeyBurst, b.tokens + (now - b.at) / this.o.perKeyRefillMs);
    b.at = now;
    return b;
  }

  private refund(publicKey: string, b: Bucket): void {
    b.tokens = Math.min(this.o.perKeyBurst, b.tokens + 1);
    // A full bucket is the state of a key never seen: forget it.
    if (b.tokens >= this.o.perKeyBurst && this.buckets.get(publicKey) === b) this.buckets.delete(publicKey);
  }
}
