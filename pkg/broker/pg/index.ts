import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../log/index.ts';
import { Announcer } from './announce.ts';
import { type Database, openDatabase } from './db.ts';
import { Feed, type FeedOptions, type FeedRow } from './feed.ts';
import { migrate, migrationsFolder } from './migrate.ts';
import { PgNotifier } from './notify.ts';
import { Reaper } from './reaper.ts';

export { inTransaction, type Queryable, withClient } from './client.ts';
export { type Database, openDatabase, redactUrl } from './db.ts';
export { guarded, isUnavailable, RETRY_AFTER_SECONDS, storageUnavailable } from './errors.ts';
export { Feed, type FeedOptions, type FeedRow } from './feed.ts';
export { LOCK_CLASS, LOCKS } from './locks.ts';
export { migrate, migrationsFolder } from './migrate.ts';
export { PgNotifier } from './notify.ts';
export { Reaper, type ReapTask } from './reaper.ts';
export { COUNTER_SHARDS, SEQUENCES } from './schema/sequences.ts';
export { Writer } from './writer.ts';

/** NOTIFY channels, one per domain; payloads carry only a sequence number. */
export const CHANNELS = {
  messages: 'berth_messages',
  conversations: 'berth_conversations',
  events: 'berth_events',
  sessions: 'berth_sessions',
} as const;

export interface PgBackendOptions {
  url: string;
  logger: Logger;
  poolSize?: number;
  /** Apply pending migrations first (MIGRATE_ON_START). */
  migrate?: boolean;
  reapIntervalMs?: number;
  /** Feed timings (tests shorten them). */
  feed?: Pick<FeedOptions<FeedRow>, 'gapCheckMs' | 'maxGapMs' | 'pollMs' | 'batch'>;
}

/**
 * What the PostgreSQL stores of one process share: one pool, one LISTEN connection, one reaper.
 * Stores create their feed reader with `feed(channel, ...)` and register reap tasks on `reaper`.
 */
export interface PgBackend {
  database: Database;
  notifier: PgNotifier;
  reaper: Reaper;
  logger: Logger;
  /** A feed reader subscribed to `channel` and positioned at the current head (needs the database). */
  feed<R extends FeedRow>(channel: string, opts: Omit<FeedOptions<R>, 'pool' | 'logger'>): Promise<Feed<R>>;
  /** After a commit: wakes the other replicas' feeds of `channel` (coalesced, outside the write). */
  announce(channel: string, seq: number): void;
  /** Readiness: does PostgreSQL answer? */
  health(): Promise<{ ok: boolean; message?: string }>;
  close(): Promise<void>;
}

export async function openPgBackend(o: PgBackendOptions): Promise<PgBackend> {
  const logger = o.logger.child({ backend: 'postgres' });
  const database = openDatabase({ url: o.url, poolSize: o.poolSize, logger });
  try {
    if (o.migrate) await migrate(database.pool, logger);
    else await assertMigrated(database);
  } catch (err) {
    await database.close();
    // Name the database (without credentials): "connect ECONNREFUSED" alone does not say which.
    throw new Error(`PostgreSQL ${database.safeUrl}: ${err instanceof Error ? err.message : String(err)}`, {
      cause: err,
    });
  }
  const notifier = new PgNotifier({ clientConfig: database.clientConfig, logger });
  await notifier.start();
  const reaper = new Reaper({ pool: database.pool, logger, intervalMs: o.reapIntervalMs });
  reaper.start();
  const feeds: Array<Feed<FeedRow>> = [];
  const announcer = new Announcer(database.pool, logger);
  logger.info({ db: database.safeUrl }, 'PostgreSQL backend open');
  return {
    database,
    notifier,
    reaper,
    logger,
    async feed(channel, opts) {
      const feed = new Feed({ ...o.feed, ...opts, pool: database.pool, logger });
      await feed.init();
      notifier.subscribe(channel, {
        notify: (payload) => feed.hint(Number(payload)),
        connected: () => feed.wake(),
      });
      feeds.push(feed as unknown as Feed<FeedRow>);
      return feed;
    },
    announce: (channel, seq) => announcer.announce(channel, seq),
    health: () => database.probe(),
    async close() {
      for (const f of feeds) f.close();
      await reaper.stop();
      await notifier.close();
      await database.close();
    },
  };
}

/** Fails with a clear message when the schema was never migrated (instead of "relation does not exist"). */
async function assertMigrated(database: Database): Promise<void> {
  const r = await database.pool.query<{ ok: boolean }>(
    `SELECT to_regclass('berth_migrations.applied') IS NOT NULL AS ok`,
  );
  const applied = r.rows[0]?.ok
    ? Number((await database.pool.query('SELECT count(*) AS n FROM berth_migrations.applied')).rows[0]?.n)
    : 0;
  const known = migrationCount();
  if (applied < known)
    throw new Error(
      `the broker schema has ${applied} of ${known} migrations: run "berth migrate" or set MIGRATE_ON_START=true`,
    );
}

function migrationCount(): number {
  const journal = JSON.parse(readFileSync(join(migrationsFolder(), 'meta', '_journal.json'), 'utf8'));
  return (journal.entries as unknown[]).length;
}
