import { createHash } from 'node:crypto';
import type { ReviewResult } from './reviewer.ts';

/** The key a token's verdict is kept under: its SHA-256, so no token sits in memory longer than its request. */
export const tokenKey = (token: string) => createHash('sha256').update(token).digest('base64url');

interface Entry {
  result: ReviewResult;
  expires: number;
}

/**
 * Review verdicts by token hash for a short while (a revoked or expired token is refused at most
 * `ttlMs` late), at most `size` of them: when full, the oldest goes first.
 */
export class VerdictCache {
  readonly #entries = new Map<string, Entry>();
  readonly #ttlMs: number;
  readonly #size: number;
  readonly #now: () => number;

  constructor(ttlMs: number, size: number, now: () => number = Date.now) {
    this.#ttlMs = ttlMs;
    this.#size = size;
    this.#now = now;
  }

  get(key: string): ReviewResult | undefined {
    const e = this.#entries.get(key);
    if (!e) return undefined;
    if (e.expires <= this.#now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return e.result;
  }

  set(key: string, result: ReviewResult): void {
    if (this.#ttlMs <= 0) return;
    this.#entries.delete(key);
    while (this.#entries.size >= this.#size) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
    this.#entries.set(key, { result, expires: this.#now() + this.#ttlMs });
  }

  get size(): number {
    return this.#entries.size;
  }
}
