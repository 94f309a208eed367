/**
 * A counting semaphore: at most `max` holders at once, the others wait in order. A wait ends early
 * when its signal aborts (a source's or a request's deadline), with the signal's reason. Callers
 * that must not queue without bound read `active` and `waiting` and refuse before acquiring.
 */
export class Limiter {
  readonly #max: number;
  #active = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(max: number) {
    if (!Number.isSafeInteger(max) || max < 1)
      throw new Error(`a limit must be a whole number ≥ 1 (got ${max})`);
    this.#max = max;
  }

  /** Waits for a slot; resolves with its release (call it exactly once). */
  async acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) throw signal.reason;
    if (this.#active < this.#max) {
      this.#active++;
      return this.#releaser();
    }
    await new Promise<void>((resolve, reject) => {
      const wake = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        const i = this.#waiting.indexOf(wake);
        if (i >= 0) this.#waiting.splice(i, 1);
        reject(signal?.reason);
      };
      this.#waiting.push(wake);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    // The slot was handed over by a release: `active` already counts it.
    return this.#releaser();
  }

  #releaser(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = this.#waiting.shift();
      if (next) next();
      else this.#active--;
    };
  }

  get max(): number {
    return this.#max;
  }

  get active(): number {
    return this.#active;
  }

  get waiting(): number {
    return this.#waiting.length;
  }
}
