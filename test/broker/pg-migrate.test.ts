import { spawnSync } from 'node:child_process';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate, openPgBackend } from '../../pkg/broker/pg/index.ts';
import { createLogger } from '../../pkg/log/index.ts';
import { TestDatabases } from './pg-harness.ts';

const dbs = new TestDatabases();
afterAll(() => dbs.dropAll());
const quiet = createLogger({ level: 'silent' });

async function tables(url: string): Promise<string[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const r = await c.query(`SELECT tablename FROM pg_tables WHERE tablename LIKE 'berth_%' ORDER BY 1`);
  await c.end();
  return r.rows.map((x) => x.tablename);
}

describe('broker migrations', () => {
  it('two concurrent migrate() calls apply every migration exactly once (advisory lock)', async () => {
    const url = await dbs.empty();
    const pools = [1, 2, 3].map(() => new pg.Pool({ connectionString: url, max: 1 }));
    const results = await Promise.all(pools.map((p) => migrate(p)));
    await Promise.all(pools.map((p) => p.end()));
    const total = results[0]?.total ?? 0;
    expect(total).toBeGreaterThan(0);
    expect(results.map((r) => r.applied).sort()).toEqual([0, 0, total]);
    expect(await tables(url)).toEqual(
      expect.arrayContaining(['berth_messages', 'berth_events', 'berth_sessions']),
    );
  });

  it('refuses an unmigrated database at start with a clear message, and MIGRATE_ON_START migrates', async () => {
    const url = await dbs.empty();
    await expect(openPgBackend({ url, logger: quiet })).rejects.toThrow(
      /run "berth migrate" or set MIGRATE_ON_START/,
    );
    const backend = await openPgBackend({ url, logger: quiet, migrate: true });
    expect((await backend.health()).ok).toBe(true);
    await backend.close();
  });

  it('`berth migrate` applies the migrations to DATABASE_URL and never prints the password', async () => {
    const url = await dbs.empty();
    const u = new URL(url);
    u.password = 'sup3r-secret';
    const run = () =>
      spawnSync(process.execPath, ['cmd/berth.ts', 'migrate'], {
        env: { ...process.env, DATABASE_URL: u.toString() },
        encoding: 'utf8',
        timeout: 60_000,
      });
    const first = run();
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/applied \d+ migration/);
    const second = run();
    expect(second.stdout).toMatch(/up to date/);
    expect(first.stdout + first.stderr + second.stdout + second.stderr).not.toContain('sup3r-secret');
    const bad = spawnSync(process.execPath, ['cmd/berth.ts', 'migrate'], {
      env: { ...process.env, DATABASE_URL: '' },
      encoding: 'utf8',
    });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/DATABASE_URL is required/);
  });
});
