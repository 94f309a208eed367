/** Something with buffered frames to write in one go. */
export interface Flushable {
  flush(): void;
}

export interface FlushOptions {
  /** The coalescing window under load (ms). */
  intervalMs: number;
  /**
   * Socket writes per window above which the next window coalesces (default 1,000 per 20 ms, i.e.
   * 50k writes/s — about a third of a core of syscalls here).
   */
  loadedWrites?: number;
}

/**
 * Adaptive SSE write coalescing. A socket write is a syscall, and with a thousand watchers each
 * frame would cost a thousand of them — but waiting for a window delays every token of a lightly
 * loaded stream. So:
 * - idle (fewer than `loadedWrites` socket writes in the last window): a few dirty sinks are
 *   flushed as soon as the code that published has run (a microtask: before the publisher's own
 *   answer is written and before the rest of the event-loop turn — waiting for `setImmediate` cost
 *   a streamed chunk ~0.6 ms of p50 on a VM where each syscall is slow); a fan-out (more than
 *   `SOON` dirty sinks) at the end of the turn (`setImmediate`), so that frames published by the
 *   turn's other callbacks still cost each watcher one write;
 * - loaded (the last window wrote more): flushes wait for the window, so each watcher costs at
 *   most 1000/intervalMs writes per second and the 1,000-watcher fan-out keeps its throughput.
 * The mode is decided per window from the writes counted in the previous one, so it follows load
 * within `intervalMs` both ways (leaving it at half the threshold).
 * Under load the spacing between flushes also grows with the number of sinks the last one wrote
 * (`lastRun × intervalMs / loadedWrites`, at most MAX_SPACING_MS): 5,000 watchers each written
 * every 20 ms would be 250,000 socket writes a second, more than a core can issue, and the backlog
 * (and every frame's latency) would grow without end; spaced to the write budget, each write
 * carries more frames and delivery keeps up.
 */
// Dirty sinks flushed in the microtask; more wait for the end of the turn.
const SOON = 16;
// The longest a loaded scheduler waits between flushes, however many sinks it writes.
const MAX_SPACING_MS = 250;

export class FlushScheduler {
  readonly #intervalMs: number;
  readonly #loadedWrites: number;
  readonly #dirty = new Set<Flushable>();
  #scheduled = false;
  #lastRun = 0;
  #windowStart = 0;
  #windowWrites = 0;
  #loaded = false;
  #lastRunSize = 0;

  constructor(opts: FlushOptions | number) {
    const o = typeof opts === 'number' ? { intervalMs: opts } : opts;
    this.#intervalMs = o.intervalMs;
    this.#loadedWrites = o.loadedWrites ?? Math.max(1, Math.round(o.intervalMs * 50));
  }

  /** Whether flushes currently wait for the window (for metrics and tests). */
  get coalescing(): boolean {
    this.#roll(performance.now());
    return this.#loaded;
  }

  mark(s: Flushable): void {
    this.#dirty.add(s);
    if (this.#scheduled) return;
    this.#scheduled = true;
    const now = performance.now();
    this.#roll(now);
    const wait = this.#loaded ? this.#lastRun + this.#spacing() - now : 0;
    if (wait > 0) setTimeout(this.#run, wait).unref();
    else queueMicrotask(this.#soon);
  }

  /** Time between flushes under load: the window, or longer when the last flush wrote many sinks. */
  #spacing(): number {
    const bySinks = (this.#lastRunSize * this.#intervalMs) / this.#loadedWrites;
    return Math.min(MAX_SPACING_MS, Math.max(this.#intervalMs, bySinks));
  }

  #soon = (): void => {
    if (this.#dirty.size <= SOON) this.#run();
    else setImmediate(this.#run);
  };

  /** Starts a new window when the current one is over, judging load by the one that ended. */
  #roll(now: number): void {
    if (now - this.#windowStart < this.#intervalMs) return;
    // A window with no activity at all (a gap longer than one window) counts as idle.
    const gap = now - this.#windowStart >= 2 * this.#intervalMs;
    // Hysteresis: coalescing itself cuts the writes per window (one per dirty sink), so leaving the
    // loaded mode takes half the threshold — otherwise a steady fan-out would flip every window.
    const threshold = this.#loaded ? this.#loadedWrites / 2 : this.#loadedWrites;
    this.#loaded = !gap && this.#windowWrites > threshold;
    this.#windowStart = now;
    this.#windowWrites = 0;
  }

  #run = (): void => {
    this.#scheduled = false;
    this.#lastRun = performance.now();
    const dirty = [...this.#dirty];
    this.#dirty.clear();
    this.#lastRunSize = dirty.length;
    this.#windowWrites += dirty.length;
    for (const s of dirty) s.flush();
  };
}
