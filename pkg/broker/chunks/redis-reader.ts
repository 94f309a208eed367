import type { Redis } from 'ioredis';
import type { Logger } from '../../log/index.ts';
import type { RawEntry } from './redis-records.ts';

export interface FirehoseReaderOptions {
  /** The dedicated connection (a blocked connection serves nothing else). */
  conn: Redis;
  key: string;
  /** Deliver entries after this id; undefined = after what the firehose holds on first contact. */
  startId?: string | undefined;
  /** Entries, oldest first, exactly once each, in id order. */
  deliver: (entries: RawEntry[]) => void;
  logger: Logger;
  /**
   * A second stream read in the same XREAD: one entry per purge by any replica, so each process
   * learns of every purge (and, after a reconnect, of the ones it missed) without a connection more.
   */
  purgeKey?: string;
  onPurge?: () => void;
  /** How long one XREAD blocks before it is re-issued (ms). */
  blockMs?: number;
  /** Entries per read. */
  count?: number;
}

const seqOf = (id: string) => Number.parseInt(id, 10);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

/**
 * The one blocking reader of a process: `XREAD BLOCK` on the firehose from the last delivered id,
 * whatever the number of SSE clients (they all hang off the process's hub). Every read starts from
 * the last id it delivered, so after a dropped connection (Redis restart, CLIENT KILL, network) the
 * next read after the reconnect is the catch-up: nothing written meanwhile is missed or repeated.
 */
export class FirehoseReader {
  readonly #o: FirehoseReaderOptions;
  #lastId: string | undefined;
  #purgeId: string | undefined;
  #stopped = false;
  #loop: Promise<void> | undefined;
  #failing = false;

  constructor(opts: FirehoseReaderOptions) {
    this.#o = opts;
    this.#lastId = opts.startId;
  }

  /** The id of the last delivered entry (undefined until the start point is known). */
  get lastId(): string | undefined {
    return this.#lastId;
  }

  /**
   * Records this process wrote, handed in on the script's reply (`first` is their first sequence):
   * when they follow the last delivered entry directly, they are delivered now, without waiting
   * for the blocked XREAD to wake and answer; the read then skips them. When another writer's
   * entries come first, none are delivered here: those, and these after them, arrive through the
   * read in order.
   */
  deliverOwn<T>(records: T[], first: number, deliver: (records: T[]) => void): void {
    if (this.#lastId === undefined || seqOf(this.#lastId) !== first - 1 || !records.length) return;
    this.#lastId = `${first + records.length - 1}-0`;
    deliver(records);
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    // Ends the blocked XREAD at once (it rejects), so the loop sees `stopped` without waiting BLOCK.
    this.#o.conn.disconnect();
    await this.#loop;
  }

  async #run(): Promise<void> {
    const { conn, key, logger } = this.#o;
    const blockMs = this.#o.blockMs ?? 5000;
    const count = this.#o.count ?? 2000;
    let backoff = 0;
    while (!this.#stopped) {
      try {
        // Start after what the firehose holds when the reader first reaches Redis (live from then).
        this.#lastId ??= await this.#tailId(key);
        const purges = this.#o.purgeKey;
        if (purges) this.#purgeId ??= await this.#tailId(purges);
        const streams = purges ? [key, purges, this.#lastId, this.#purgeId as string] : [key, this.#lastId];
        const res = (await conn.xread('COUNT', count, 'BLOCK', blockMs, 'STREAMS', ...streams)) as
          | [string, RawEntry[]][]
          | null;
        if (this.#failing) logger.info({ lastId: this.#lastId }, 'chunk reader reconnected; caught up');
        this.#failing = false;
        backoff = 0;
        const purged = res?.find(([k]) => k === purges)?.[1];
        if (purged?.length) {
          this.#purgeId = (purged[purged.length - 1] as RawEntry)[0];
          this.#o.onPurge?.();
        }
        const entries = this.#unseen(res?.find(([k]) => k === key)?.[1]);
        if (!entries?.length) continue;
        this.#gapCheck(entries);
        this.#lastId = (entries[entries.length - 1] as RawEntry)[0];
        this.#o.deliver(entries);
      } catch (err) {
        if (this.#stopped) break;
        if (!this.#failing)
          logger.warn(
            { err: (err as Error).message, lastId: this.#lastId },
            'chunk reader lost Redis; retrying',
          );
        this.#failing = true;
        // ioredis reconnects on its own; until then a read fails at once, so wait between tries.
        backoff = Math.min(Math.max(backoff * 2, 20), 1000);
        await sleep(backoff);
      }
    }
  }

  /** Entries after the last delivered one (this process's own may have been delivered meanwhile). */
  #unseen(entries: RawEntry[] | undefined): RawEntry[] | undefined {
    if (!entries?.length || this.#lastId === undefined) return entries;
    const last = seqOf(this.#lastId);
    if (seqOf((entries[0] as RawEntry)[0]) > last) return entries;
    return entries.filter(([id]) => seqOf(id) > last);
  }

  /**
   * Sequences are consecutive in the firehose, so a jump means entries were trimmed (MAXLEN ~)
   * before this reader got to them — a reader more than the firehose cap behind. Live listeners
   * miss them (they stay readable per query until their TTL); say so instead of hiding it.
   */
  #gapCheck(entries: RawEntry[]): void {
    const last = this.#lastId ? Number.parseInt(this.#lastId, 10) : 0;
    const first = Number.parseInt((entries[0] as RawEntry)[0], 10);
    if (last > 0 && first > last + 1)
      this.#o.logger.warn(
        { after: last, next: first, missed: first - last - 1 },
        'chunk reader fell behind the firehose cap; live delivery skipped trimmed chunks',
      );
  }

  async #tailId(key: string): Promise<string> {
    const last = (await this.#o.conn.xrevrange(key, '+', '-', 'COUNT', 1)) as RawEntry[];
    return last[0]?.[0] ?? '0-0';
  }
}
