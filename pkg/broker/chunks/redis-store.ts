import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from '../../log/index.ts';
import type { Page } from '../core/seq-deque.ts';
import {
  createRedis,
  type RedisConnectionOptions,
  readerOptions,
  redisOptions,
  redisTarget,
  reportConnection,
  StorageUnavailableError,
  storageError,
} from './redis-connection.ts';
import { ChunkDelivery } from './redis-delivery.ts';
import { type Appended, appendManyArgs, type Group, GroupAppender } from './redis-group-append.ts';
import { FirehoseReader } from './redis-reader.ts';
import { BATCH_BYTES, type RawEntry, recordOf, toBatches } from './redis-records.ts';
import { APPEND_MANY_SCRIPT, COMPLETE_SCRIPT } from './redis-scripts.ts';
import {
  type ChunkStore,
  type ChunkText,
  type CompleteResult,
  isoTime,
  type StoredChunk,
  type StreamState,
  storedChunk,
} from './types.ts';

export interface RedisChunkStoreOptions extends RedisConnectionOptions {
  /** REDIS_STREAM_TTL_SECONDS: per-query streams and states expire this long after their last write. */
  ttlSeconds: number;
  /** BROKER_MAX_CHUNKS: the firehose is capped near this many entries (XADD MAXLEN ~). */
  maxChunks: number;
  /** Cap of one query's stream (default: maxChunks). */
  maxChunksPerQuery?: number | undefined;
  /** Prefix of every key (default `berth:chunks:`); several brokers may share a Redis with distinct prefixes. */
  keyPrefix?: string | undefined;
  /** Chunks per script call: a bulk POST is a few pipelined calls, none blocking Redis for long. */
  maxBatch?: number | undefined;
}

export interface StoreHealth {
  ok: boolean;
  backend: 'redis';
  target: string;
  error?: string;
}

type ScriptedRedis = Redis & {
  chunkAppendMany(...args: (string | number)[]): Promise<number[]>;
  chunkComplete(...args: (string | number)[]): Promise<number>;
};

/**
 * Chunks in Redis streams (see docs/broker.md "Redis chunk backend"): a firehose stream and one
 * stream per query, entry id `<sequence>-0` (sequences from one counter, stable whatever is trimmed),
 * a state hash per query, writes as atomic Lua scripts. Listeners are fed by the shared blocking
 * reader, in sequence order, exactly once, so every replica sees the same records in the same
 * order; this process's own writes are handed to the reader on the script's reply and delivered at
 * once when nothing comes before them (FirehoseReader.deliverOwn) — a chunk written here reaches
 * this replica's watchers without the blocked read's wake-up round trip.
 */
export class RedisChunkStore implements ChunkStore {
  readonly #cmd: ScriptedRedis;
  readonly #readerConn: Redis;
  #reader: FirehoseReader | undefined;
  readonly #o: RedisChunkStoreOptions;
  readonly #log: Logger;
  readonly #p: string;
  readonly #live: ChunkDelivery;
  readonly #appender: GroupAppender;
  /** The last connection error (cleared when a connection is ready again), for health. */
  readonly #conn: { error?: string | undefined } = {};
  /** Names this store's connections in CLIENT LIST (`berth-chunks[-reader]-<instance>`). */
  readonly instance = randomBytes(4).toString('hex');

  constructor(opts: RedisChunkStoreOptions, logger: Logger) {
    this.#o = opts;
    this.#log = logger;
    this.#p = opts.keyPrefix ?? 'berth:chunks:';
    this.#live = new ChunkDelivery(logger, opts.ttlSeconds);
    this.#cmd = createRedis(redisOptions(opts, `berth-chunks-${this.instance}`)) as ScriptedRedis;
    this.#readerConn = createRedis(readerOptions(opts, `berth-chunks-reader-${this.instance}`));
    // ioredis sends EVALSHA and falls back to EVAL after a NOSCRIPT (a restarted Redis).
    // The append's key count varies with its groups: the call passes it first.
    this.#cmd.defineCommand('chunkAppendMany', { lua: APPEND_MANY_SCRIPT });
    this.#cmd.defineCommand('chunkComplete', { numberOfKeys: 5, lua: COMPLETE_SCRIPT });
    this.#appender = new GroupAppender((groups) => this.#appendGroups(groups), {
      maxChunks: opts.maxBatch ?? 1000,
      maxBytes: BATCH_BYTES,
    });
    reportConnection(this.#cmd, 'commands', opts.url, logger, this.#conn);
    reportConnection(this.#readerConn, 'reader', opts.url, logger, this.#conn);
  }

  /** Connects both connections and starts the reader; an unreachable Redis is logged, not fatal. */
  async connect(): Promise<void> {
    const [cmd] = await Promise.allSettled([this.#cmd.connect(), this.#readerConn.connect()]);
    let startId: string | undefined;
    if (cmd.status === 'fulfilled') {
      try {
        const last = (await this.#cmd.xrevrange(this.#key('fh'), '+', '-', 'COUNT', 1)) as RawEntry[];
        startId = last[0]?.[0] ?? '0-0';
        this.#live.head = Number.parseInt(startId, 10);
      } catch {
        // The reader finds its start point itself once Redis answers.
      }
    }
    if (startId === undefined)
      this.#log.warn(
        { target: redisTarget(this.#o.url), err: this.#conn.error },
        'redis unreachable at start; chunk requests answer 503 until it is back',
      );
    this.#reader = new FirehoseReader({
      conn: this.#readerConn,
      key: this.#key('fh'),
      startId,
      deliver: (entries) => this.#live.entries(entries),
      purgeKey: this.#key('purges'),
      onPurge: () => this.#live.purged(),
      logger: this.#log,
    });
    this.#reader.start();
  }

  head(): number {
    return this.#live.head;
  }

  /**
   * The sequence counter: the append and complete scripts raise it and XADD in one atomic step, so
   * every record acknowledged by any replica is at or below it (start of a live-only watch; this
   * replica's reader may not have read those records yet). 503 while Redis is down.
   */
  async committedHead(): Promise<number> {
    const v = await this.#run(this.#cmd.get(this.#key('seq')));
    return Math.max(this.#live.head, Number(v ?? 0));
  }

  onAppend(listener: (c: StoredChunk) => void): void {
    this.#live.onAppend(listener);
  }

  onPurge(listener: () => void): void {
    this.#live.onPurge(listener);
  }

  /** Both connections up and the reader positioned (for /readyz: live delivery matters as much as writes). */
  healthy(): boolean {
    return (
      this.#cmd.status === 'ready' &&
      this.#readerConn.status === 'ready' &&
      this.#reader?.lastId !== undefined
    );
  }

  health(): StoreHealth {
    const h: StoreHealth = { ok: this.healthy(), backend: 'redis', target: redisTarget(this.#o.url) };
    if (!h.ok) h.error = this.#conn.error ?? `connection ${this.#cmd.status}/${this.#readerConn.status}`;
    return h;
  }

  async append(query: string, chunks: ChunkText[]): Promise<StoredChunk[]> {
    this.#writable();
    const batches = toBatches(chunks, this.#o.maxBatch ?? 1000);
    // Every batch joins this turn's script calls (pipelined on the connection): one round trip.
    const stored = await this.#run(Promise.all(batches.map((b) => this.#appender.append(query, b))));
    const out: StoredChunk[] = [];
    for (const [i, b] of batches.entries()) {
      const { first, at } = stored[i] as Appended;
      const expiresAt = at + this.#o.ttlSeconds * 1000;
      for (const [j, json] of b.json.entries())
        out.push(storedChunk(first + j, query, at, json, b.flags[j] === '1', expiresAt, true));
    }
    this.#live.own(out, this.#reader);
    return out;
  }

  #appendGroups(groups: Group[]): Promise<number[]> {
    const max = this.#o.maxChunks;
    const limits = { ttlSeconds: this.#o.ttlSeconds, max, perQuery: this.#o.maxChunksPerQuery ?? max };
    return this.#cmd.chunkAppendMany(...appendManyArgs((k, q) => this.#key(k, q), groups, limits));
  }

  async complete(query: string): Promise<{ result: CompleteResult; marker?: StoredChunk }> {
    this.#writable();
    const now = Date.now();
    const seq = await this.#run(
      this.#cmd.chunkComplete(...this.#scriptKeys(query), ...this.#scriptArgs(query, now)),
    );
    if (seq < 0) return { result: 'unknown' };
    if (seq === 0) return { result: 'already_completed' };
    const marker = storedChunk(seq, query, now, undefined, false, now + this.#o.ttlSeconds * 1000, true);
    this.#live.own([marker], this.#reader);
    return { result: 'completed', marker };
  }

  async state(query: string): Promise<StreamState | undefined> {
    const [runAfter, completed, last] = await this.#run(
      this.#cmd.hmget(this.#key('st:', query), 'runAfter', 'completed', 'last'),
    );
    if (runAfter == null) return undefined;
    return { query, completed: completed === '1', runAfter: Number(runAfter), lastActivity: Number(last) };
  }

  async page(query: string | undefined, cursor: number, limit: number): Promise<Page<StoredChunk>> {
    const key = query === undefined ? this.#key('fh') : this.#key('q:', query);
    const res = await this.#run(
      this.#cmd
        .pipeline()
        .xrange(key, `${cursor + 1}-0`, '+', 'COUNT', limit + 1)
        .xlen(key)
        .exec(),
    );
    const failed = res?.find(([err]) => err)?.[0];
    if (!res || failed) throw storageError(failed ?? new Error('pipeline aborted'));
    const entries = res[0]?.[1] as RawEntry[];
    const expiresAt = Date.now() + this.#o.ttlSeconds * 1000;
    const items = entries.slice(0, limit).map((e) => recordOf(e, query, expiresAt));
    return { items, total: res[1]?.[1] as number, hasMore: entries.length > limit };
  }

  /**
   * Deletes the firehose, every query stream and state; the sequence counter stays (never reused).
   * The purge is then announced on the `purges` stream, which every replica's reader follows.
   */
  async purge(): Promise<number> {
    const fh = this.#key('fh');
    const res = await this.#run(this.#cmd.multi().xlen(fh).del(fh).exec());
    const deleted = (res?.[0]?.[1] as number | undefined) ?? 0;
    const index = this.#key('streams');
    for (;;) {
      const queries = await this.#run(this.#cmd.zrange(index, '0', '499'));
      if (!queries.length) break;
      const p = this.#cmd.pipeline();
      for (const q of queries) p.del(this.#key('q:', q), this.#key('st:', q));
      p.zrem(index, ...queries);
      await this.#run(p.exec());
    }
    // Every replica's reader (this one's too) learns of the purge and ends its live query streams.
    await this.#run(this.#cmd.xadd(this.#key('purges'), 'MAXLEN', '~', 64, '*', 'deleted', deleted));
    return deleted;
  }

  /** Periodic upkeep: forgets index entries of streams whose keys Redis has expired. */
  sweep(): void {
    const cutoff = Date.now() - this.#o.ttlSeconds * 1000;
    this.#cmd.zremrangebyscore(this.#key('streams'), '-inf', cutoff).catch((err: Error) => {
      this.#log.debug({ err: err.message }, 'chunk index upkeep skipped');
    });
  }

  async close(): Promise<void> {
    await this.#reader?.stop();
    await this.#cmd.quit().catch(() => this.#cmd.disconnect());
  }

  #key(kind: string, query = ''): string {
    return `${this.#p}${kind}${query}`;
  }

  #scriptKeys(query: string): string[] {
    return [
      this.#key('seq'),
      this.#key('fh'),
      this.#key('q:', query),
      this.#key('st:', query),
      this.#key('streams'),
    ];
  }

  #scriptArgs(query: string, now: number): (string | number)[] {
    const max = this.#o.maxChunks;
    const perQuery = this.#o.maxChunksPerQuery ?? max;
    return [query, now, this.#o.ttlSeconds, max, perQuery, JSON.stringify(query), isoTime(now)];
  }

  /**
   * Writes wait for the reader's start point: a write before it (Redis unreachable at start, the
   * reader not yet through) would land before where the reader begins and never reach the listeners.
   */
  #writable(): void {
    if (this.#reader?.lastId === undefined)
      throw new StorageUnavailableError('not connected yet (the chunk reader has not reached Redis)');
  }

  /** Awaits a Redis call, turning an outage into a 503 (StorageUnavailableError). */
  async #run<T>(p: Promise<T>): Promise<T> {
    try {
      return await p;
    } catch (err) {
      throw storageError(err);
    }
  }
}

/**
 * Opens the Redis chunk store: connects (waiting up to the connect timeout), positions the shared
 * reader at the firehose's tail and starts it. An unreachable Redis does not fail the start: the
 * store answers 503 and reports unhealthy until ioredis reconnects.
 */
export async function openRedisChunkStore(
  opts: RedisChunkStoreOptions,
  logger: Logger,
): Promise<RedisChunkStore> {
  const store = new RedisChunkStore(opts, logger);
  await store.connect();
  return store;
}
