import type { Logger } from '../../log/index.ts';
import type { FirehoseReader } from './redis-reader.ts';
import { type RawEntry, recordOf } from './redis-records.ts';
import type { StoredChunk } from './types.ts';

/**
 * This process's side of live delivery for the Redis chunk store: its listeners, the highest
 * sequence it has seen, and the two ways records reach the listeners — the shared reader's entries
 * (every replica's, in sequence order) and this process's own writes on their script's reply.
 */
export class ChunkDelivery {
  readonly #listeners: Array<(c: StoredChunk) => void> = [];
  readonly #purgeListeners: Array<() => void> = [];
  readonly #log: Logger;
  readonly #ttlMs: number;
  /** The highest sequence written or read by this process. */
  head = 0;

  constructor(logger: Logger, ttlSeconds: number) {
    this.#log = logger;
    this.#ttlMs = ttlSeconds * 1000;
  }

  onAppend(listener: (c: StoredChunk) => void): void {
    this.#listeners.push(listener);
  }

  onPurge(listener: () => void): void {
    this.#purgeListeners.push(listener);
  }

  purged(): void {
    for (const l of this.#purgeListeners) l();
  }

  /** Entries from the reader, in sequence order. */
  entries(entries: RawEntry[]): void {
    const expiresAt = Date.now() + this.#ttlMs;
    for (const entry of entries) {
      const e = recordOf(entry, undefined, expiresAt);
      if (e.seq > this.head) this.head = e.seq;
      this.#publish(e);
    }
  }

  /**
   * Records this process wrote, delivered now if they follow the last delivered one. The script
   * calls of one POST may interleave with another replica's, so only the run of consecutive
   * sequences at the start is offered; the reader brings the rest.
   */
  own(records: StoredChunk[], reader: FirehoseReader | undefined): void {
    const first = records[0];
    if (!first) return;
    const last = records.at(-1) as StoredChunk;
    if (last.seq > this.head) this.head = last.seq;
    if (!reader) return;
    let n = 1;
    while (n < records.length && (records[n] as StoredChunk).seq === first.seq + n) n++;
    reader.deliverOwn(n === records.length ? records : records.slice(0, n), first.seq, (rs) => {
      for (const r of rs) this.#publish(r);
    });
  }

  #publish(e: StoredChunk): void {
    for (const l of this.#listeners)
      try {
        l(e);
      } catch (err) {
        this.#log.error({ err, seq: e.seq }, 'chunk listener failed');
      }
  }
}
