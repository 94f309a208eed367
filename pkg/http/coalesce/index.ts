/**
 * Text written within one tick of the event loop, handed on as one piece at the end of that tick.
 *
 * A stream's producer often yields several pieces in a row (the chunks of one socket read resolve as
 * microtasks); one socket write each costs a syscall and a TCP segment apiece. Collecting them until
 * `process.nextTick` holds nothing back that could have left: the tick ends before any I/O happens.
 */
export class TickCoalescer {
  #pending = '';
  readonly #write: (text: string) => void;

  /** `write` gets everything pushed since the last flush, in order, never an empty string. */
  constructor(write: (text: string) => void) {
    this.#write = write;
  }

  /** Queues `text`; the first push of a tick schedules the flush. */
  push(text: string): void {
    if (!text) return;
    if (!this.#pending) process.nextTick(this.flush);
    this.#pending += text;
  }

  /** Hands on what is queued now (ending a stream must not wait for the tick). */
  readonly flush = (): void => {
    if (!this.#pending) return;
    const text = this.#pending;
    this.#pending = '';
    this.#write(text);
  };

  /** True while something waits for the end of the tick. */
  get pending(): boolean {
    return this.#pending !== '';
  }
}
