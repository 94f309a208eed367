import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate as drizzleMigrate } from 'drizzle-orm/node-postgres/migrator';
import type pg from 'pg';
import type { Logger } from '../../log/index.ts';
import { withClient } from './client.ts';
import { LOCK_CLASS, LOCKS } from './locks.ts';

/**
 * The checked-in SQL migrations. From source they sit next to this module; tsc does not copy .sql
 * files, so `npm run build` copies the folder into dist/ beside the compiled module, and as a last
 * resort the package root's source folder is used (running dist/ inside a checkout).
 */
export function migrationsFolder(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, 'migrations')];
  for (let dir = here, i = 0; i < 8; i++, dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) {
      candidates.push(join(dir, 'pkg', 'broker', 'pg', 'migrations'));
      break;
    }
  }
  const found = candidates.find((d) => existsSync(join(d, 'meta', '_journal.json')));
  if (!found) throw new Error(`broker SQL migrations not found (looked in ${candidates.join(', ')})`);
  return found;
}

export interface MigrateResult {
  applied: number;
  total: number;
  waitedMs: number;
}

/**
 * Applies pending migrations. drizzle's migrator has no cross-process lock, so it runs on one
 * dedicated connection holding a session advisory lock: a second replica (or `berth migrate` run
 * twice) waits, then finds nothing left to apply. The lock dies with the connection if we crash.
 */
export async function migrate(pool: pg.Pool, logger?: Logger): Promise<MigrateResult> {
  const folder = migrationsFolder();
  const started = Date.now();
  return withClient(pool, async (client) => {
    await client.query('SELECT pg_advisory_lock($1, $2)', [LOCK_CLASS, LOCKS.migrate]);
    const waitedMs = Date.now() - started;
    try {
      const before = await appliedCount(client);
      await drizzleMigrate(drizzle(client), {
        migrationsFolder: folder,
        migrationsSchema: 'berth_migrations',
        migrationsTable: 'applied',
      });
      const total = await appliedCount(client);
      const result = { applied: total - before, total, waitedMs };
      logger?.info(result, result.applied ? 'broker migrations applied' : 'broker schema up to date');
      return result;
    } finally {
      await client.query('SELECT pg_advisory_unlock($1, $2)', [LOCK_CLASS, LOCKS.migrate]);
    }
  });
}

async function appliedCount(client: pg.PoolClient): Promise<number> {
  const exists = await client.query(`SELECT to_regclass('berth_migrations.applied') IS NOT NULL AS ok`);
  if (!exists.rows[0]?.ok) return 0;
  const r = await client.query<{ n: string }>('SELECT count(*) AS n FROM berth_migrations.applied');
  return Number(r.rows[0]?.n ?? 0);
}
