import type pg from 'pg';
import type { Logger } from '../../log/index.ts';
import { guarded } from './errors.ts';
import { describe } from './notify.ts';

export interface FeedRow {
  seq: number;
}

export interface FeedOptions<R extends FeedRow> {
  /** Domain name, for logs. */
  name: string;
  pool: pg.Pool;
  logger: Logger;
  /** Committed rows with `seq > after`, in sequence order, at most `limit`. */
  read(after: number, limit: number): Promise<R[]>;
  /** Where a fresh process starts delivering: the highest committed sequence. */
  start(): Promise<number>;
  /** Hands one row to the store's listeners (which publish to the SSE hub). */
  deliver(row: R): void;
  batch?: number;
  /** How often a gap's origin is re-checked (ms). */
  gapCheckMs?: number;
  /** A gap is skipped after this long whatever the check says (ms). */
  maxGapMs?: number;
  /** A catch-up read this often even without notifications (insurance, ms). */
  pollMs?: number;
}

/**
 * Delivers a domain's rows to this process's listeners in sequence order, without gaps, whichever
 * replica wrote them. It reads `seq > lastDelivered` on a NOTIFY, after every (re)connect of the
 * LISTEN connection and every `pollMs`; rows this process committed are handed in directly
 * (`local`), so local writes reach watchers without a read or a NOTIFY round trip.
 *
 * Gaps. Sequence values are drawn before commit, so transactions commit out of order: 6 can be
 * visible while 5 is still in flight. Only contiguous sequences are delivered. A gap is skipped when
 * it cannot fill any more — a rolled-back insert burns its value, a purge or the reaper removes rows
 * a lagging reader never saw, a session update supersedes its previous sequence. The value of a gap
 * was drawn before the rows after it committed, so by a transaction that started before the moment
 * the gap was seen (`t0`); once no transaction of this database older than `t0` is still open
 * (pg_stat_activity), every holder has committed or rolled back: one more read, then what is still
 * missing is skipped. Without that proof (a long transaction elsewhere) the gap is skipped after
 * `maxGapMs`. Writers draw sequences inside short single statements, so that bound is not reached
 * by a healthy writer; a skipped row that commits later is still listed by reads, only not pushed live.
 */
export class Feed<R extends FeedRow> {
  readonly #o: Required<FeedOptions<R>>;
  readonly #buffer = new Map<number, R>();
  readonly #waiters: Array<{ seq: number; resolve: () => void }> = [];
  #last = 0;
  #dirty = false;
  #running = false;
  #closed = false;
  #failures = 0;
  #poll: NodeJS.Timeout | undefined;
  #nap: (() => void) | undefined;

  constructor(opts: FeedOptions<R>) {
    // Explicit `??`: an option passed as undefined must not erase its default.
    this.#o = {
      ...opts,
      batch: opts.batch ?? 500,
      gapCheckMs: opts.gapCheckMs ?? 20,
      maxGapMs: opts.maxGapMs ?? 1000,
      pollMs: opts.pollMs ?? 5000,
    };
  }

  /** The last sequence delivered (a live-only watcher starts here). */
  head(): number {
    return this.#last;
  }

  /**
   * The highest sequence committed in the database right now (whichever replica wrote it), never
   * below this feed's watermark: where a live-only watch starts. 503 while PostgreSQL is down.
   */
  async committed(): Promise<number> {
    const c = await guarded('postgres', () => this.#o.start());
    return Math.max(this.#last, c);
  }

  /** Reads the start position; nothing before it is delivered (history is read by the routes). */
  async init(): Promise<void> {
    this.#last = Math.max(this.#last, await this.#o.start());
    this.#poll = setInterval(() => this.wake(), this.#o.pollMs);
    this.#poll.unref();
  }

  /** Rows this process just committed. */
  local(rows: R[]): void {
    for (const r of rows) if (r.seq > this.#last) this.#buffer.set(r.seq, r);
    this.#pump();
  }

  /** A notification: `seq` was committed somewhere. */
  hint(seq: number): void {
    if (!(seq > this.#last) || this.#buffer.has(seq)) return;
    this.wake();
  }

  /** Something may have been missed (reconnect, poll): read from the last delivered sequence. */
  wake(): void {
    this.#dirty = true;
    this.#nap?.();
    if (!this.#running && !this.#closed) void this.#run();
  }

  /** Resolves once `seq` was delivered, or after `ms` (the write itself is committed either way). */
  settle(seq: number, ms = 2000): Promise<void> {
    if (seq <= this.#last || this.#closed) return Promise.resolve();
    return new Promise((resolve) => {
      const w = { seq, resolve };
      const t = setTimeout(() => {
        const i = this.#waiters.indexOf(w);
        if (i >= 0) this.#waiters.splice(i, 1);
        resolve();
      }, ms);
      w.resolve = () => {
        clearTimeout(t);
        resolve();
      };
      this.#waiters.push(w);
    });
  }

  close(): void {
    this.#closed = true;
    clearInterval(this.#poll);
    this.#nap?.();
    for (const w of this.#waiters.splice(0)) w.resolve();
  }

  #pump(): void {
    for (let next = this.#buffer.get(this.#last + 1); next; next = this.#buffer.get(this.#last + 1)) {
      this.#buffer.delete(next.seq);
      this.#last = next.seq;
      this.#emit(next);
    }
    if (this.#waiters.length) {
      const done = this.#waiters.filter((w) => w.seq <= this.#last);
      for (const w of done) {
        this.#waiters.splice(this.#waiters.indexOf(w), 1);
        w.resolve();
      }
    }
    // Rows beyond a hole: the hole may be another replica's commit that a read would find.
    if (this.#buffer.size && !this.#running) this.wake();
  }

  #emit(row: R): void {
    try {
      this.#o.deliver(row);
    } catch (err) {
      this.#o.logger.error({ err, feed: this.#o.name, seq: row.seq }, 'feed listener failed');
    }
  }

  async #run(): Promise<void> {
    this.#running = true;
    try {
      while (this.#dirty && !this.#closed) {
        this.#dirty = false;
        try {
          // A hole among this process's own commits is usually a sibling transaction a moment
          // from COMMIT: give it that moment before asking the database.
          if (this.#buffer.size) {
            await this.#sleep(Math.min(5, this.#o.gapCheckMs));
            if (!this.#buffer.size && !this.#dirty) continue;
          }
          await this.#readNew();
          if (this.#buffer.size) await this.#resolveGap();
          this.#failures = 0;
        } catch (err) {
          // PostgreSQL unreachable: keep trying (the LISTEN reconnect wakes us too).
          this.#failures++;
          if (this.#failures === 1)
            this.#o.logger.warn({ err: describe(err), feed: this.#o.name }, 'feed read failed; retrying');
          await this.#sleep(Math.min(5000, 50 * 2 ** this.#failures));
          this.#dirty = true;
        }
      }
    } finally {
      this.#running = false;
    }
  }

  /** Reads committed rows after the last delivered one, in batches, stopping at a hole. */
  async #readNew(): Promise<void> {
    for (;;) {
      const rows = await this.#o.read(this.#last, this.#o.batch);
      for (const r of rows) if (r.seq > this.#last) this.#buffer.set(r.seq, r);
      this.#pump();
      if (rows.length < this.#o.batch || this.#buffer.size || this.#closed) return;
    }
  }

  async #resolveGap(): Promise<void> {
    const since = Date.now();
    const through = Math.max(...this.#buffer.keys());
    const t0 = await this.#now();
    for (;;) {
      if (this.#closed) return;
      if (Date.now() - since >= this.#o.maxGapMs || (await this.#holdersGone(t0))) break;
      await this.#sleep(this.#o.gapCheckMs);
      if (this.#last >= through) return; // filled by local commits meanwhile
      await this.#readNew();
      if (this.#last >= through) return;
    }
    await this.#readNew();
    let skipped = 0;
    while (this.#last < through) {
      const row = this.#buffer.get(this.#last + 1);
      if (row) this.#pump();
      else {
        this.#last++;
        skipped++;
      }
    }
    this.#pump();
    if (skipped)
      this.#o.logger.debug(
        { feed: this.#o.name, skipped, through, waitedMs: Date.now() - since },
        'feed skipped a gap',
      );
    if (this.#buffer.size) this.#dirty = true;
  }

  /** The database clock with microseconds (a JS Date would round it down). */
  async #now(): Promise<string> {
    const r = await this.#o.pool.query<{ t: string }>('SELECT clock_timestamp()::text AS t');
    return r.rows[0]?.t ?? new Date().toISOString();
  }

  /** True when no client transaction of this database that began before `t0` is still open. */
  async #holdersGone(t0: string): Promise<boolean> {
    const r = await this.#o.pool.query<{ gone: boolean }>(
      `SELECT NOT EXISTS (SELECT 1 FROM pg_stat_activity
         WHERE datname = current_database() AND backend_type = 'client backend'
           AND pid <> pg_backend_pid() AND xact_start < $1::timestamptz) AS gone`,
      [t0],
    );
    return r.rows[0]?.gone === true;
  }

  /** Waits `ms`, or less when woken (a local commit or a notification may fill the hole). */
  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        resolve();
      }
      this.#nap = () => {
        this.#nap = undefined;
        done();
      };
    });
  }
}
