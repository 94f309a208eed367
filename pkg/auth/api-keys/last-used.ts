import type { Logger } from '../../log/index.ts';

export interface LastUsedStats {
  flushes: number;
  writes: number;
  failures: number;
}

/**
 * Collects "key used at" times in memory and writes them in one batch per interval: one merge patch
 * per key used in the window, never one per request (the reference PATCHes on every request).
 */
export class LastUsedRecorder {
  readonly stats: LastUsedStats = { flushes: 0, writes: 0, failures: 0 };
  private pending = new Map<string, string>();
  private readonly write: (publicKey: string, at: string) => Promise<void>;
  private readonly logger: Logger | undefined;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(opts: {
    write: (publicKey: string, at: string) => Promise<void>;
    intervalMs: number;
    logger?: Logger;
  }) {
    this.write = opts.write;
    this.logger = opts.logger;
    if (opts.intervalMs > 0) {
      this.timer = setInterval(() => void this.flush(), opts.intervalMs);
      this.timer.unref();
    }
  }

  touch(publicKey: string, at: number): void {
    this.pending.set(publicKey, new Date(at).toISOString());
  }

  /** The time not yet written for a key, so listings are current before the batch lands. */
  pendingFor(publicKey: string): string | undefined {
    return this.pending.get(publicKey);
  }

  /** Writes everything pending; concurrent calls chain so batches never overlap. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.flushOnce());
    return this.flushing;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  private async flushOnce(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    this.stats.flushes++;
    await Promise.all(
      [...batch].map(async ([publicKey, at]) => {
        try {
          await this.write(publicKey, at);
          this.stats.writes++;
        } catch (err) {
          // Losing a last-used time is harmless; a deleted key must not be retried forever.
          this.stats.failures++;
          this.logger?.warn({ err, publicKey }, 'could not record API key last-used time');
        }
      }),
    );
  }
}
