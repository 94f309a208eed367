/** Something with buffered frames to write in one go. */
export interface Flushable {
  flush(): void;
}

/**
 * Coalesces SSE writes: a socket write is a syscall, and with a thousand watchers each frame would
 * cost a thousand of them. Dirty sinks are flushed together at most once per `intervalMs` — at
 * once when the last flush is older than that (idle streams get no added latency), otherwise at the
 * end of the window, so each watcher costs at most 1000/intervalMs writes per second.
 */
export class FlushScheduler {
  readonly #intervalMs: number;
  readonly #dirty = new Set<Flushable>();
  #last = 0;
  #scheduled = false;

  constructor(intervalMs: number) {
    this.#intervalMs = intervalMs;
  }

  mark(s: Flushable): void {
    this.#dirty.add(s);
    if (this.#scheduled) return;
    this.#scheduled = true;
    const wait = this.#last + this.#intervalMs - performance.now();
    if (wait <= 0) setImmediate(this.#run);
    else setTimeout(this.#run, wait).unref();
  }

  #run = (): void => {
    this.#scheduled = false;
    this.#last = performance.now();
    const dirty = [...this.#dirty];
    this.#dirty.clear();
    for (const s of dirty) s.flush();
  };
}
