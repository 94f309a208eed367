import type { Logger } from '../../log/index.ts';
import type { StoredEvent } from '../events/types.ts';
import type { StoredMessage } from '../messages/types.ts';
import { isUnavailable } from '../pg/index.ts';
import type { RollupInput } from './pg-rollup.ts';

// Roll-ups waiting for PostgreSQL (during an outage); past this many the oldest are dropped with an
// error log rather than growing the heap without bound.
const MAX_QUEUED = 100_000;
// Consecutive roll-ups of one kind written in one transaction.
const MAX_BATCH = 500;

/**
 * The roll-ups handed over through `recordEvent`/`recordMessage` (events or messages kept in
 * memory, sessions in PostgreSQL). Those calls cannot fail or wait, so the changes queue here and
 * are written in order; while PostgreSQL is unreachable they stay queued and are retried with
 * backoff, so a write acknowledged by the memory store still reaches its session after the outage.
 */
export class RollupQueue {
  readonly #write: (input: RollupInput) => Promise<void>;
  readonly #logger: Logger;
  #queue: RollupInput[] = [];
  #flushing: Promise<void> | undefined;
  #retry: NodeJS.Timeout | undefined;
  #backoff = 50;
  #closed = false;

  constructor(write: (input: RollupInput) => Promise<void>, logger: Logger) {
    this.#write = write;
    this.#logger = logger;
  }

  get length(): number {
    return this.#queue.length;
  }

  push(input: RollupInput): void {
    if (this.#closed) return;
    this.#queue.push(input);
    if (this.#queue.length > MAX_QUEUED) {
      this.#queue.shift();
      this.#logger.error({ max: MAX_QUEUED }, 'session roll-up queue full; dropped the oldest change');
    }
    if (!this.#retry) this.#start();
  }

  /**
   * Resolves once what is queued was written, or the current attempt failed: reads made after a
   * recordEvent see its change (the contract), and during an outage they go on (and answer 503).
   */
  async settled(): Promise<void> {
    await this.#flushing;
  }

  /** Waits (at most `ms`) for the queue to empty, then takes no more work. */
  async close(ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    while (this.#queue.length && Date.now() < deadline) {
      await this.settled();
      if (this.#queue.length) await new Promise((r) => setTimeout(r, 50));
    }
    this.#closed = true;
    clearTimeout(this.#retry);
  }

  #start(): void {
    this.#flushing ??= this.#flush().finally(() => {
      this.#flushing = undefined;
    });
  }

  async #flush(): Promise<void> {
    while (this.#queue.length) {
      const head = this.#queue[0] as RollupInput;
      let n = 1;
      while (n < this.#queue.length && n < MAX_BATCH && this.#queue[n]?.kind === head.kind) n++;
      const batch = this.#queue.slice(0, n);
      const input: RollupInput =
        head.kind === 'events'
          ? { kind: 'events', items: batch.flatMap((b) => b.items as StoredEvent[]) }
          : { kind: 'messages', items: batch.flatMap((b) => b.items as StoredMessage[]), at: head.at };
      try {
        await this.#write(input);
        this.#queue.splice(0, n);
        this.#backoff = 50;
      } catch (err) {
        if (isUnavailable(err) && !this.#closed) {
          this.#retry = setTimeout(() => {
            this.#retry = undefined;
            this.#start();
          }, this.#backoff);
          this.#retry.unref();
          this.#backoff = Math.min(this.#backoff * 2, 5000);
          return;
        }
        // Not an outage: a bug in this batch. Logged and dropped so the queue does not wedge.
        this.#queue.splice(0, n);
        if (!this.#closed) this.#logger.error({ err }, 'session roll-up failed; change dropped');
      }
    }
  }
}
