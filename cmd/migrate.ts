import pg from 'pg';
import { ConfigError, loadBrokerConfig } from '../pkg/broker/config.ts';
import { migrate, redactUrl } from '../pkg/broker/pg/index.ts';

/**
 * `berth migrate`: applies the broker's SQL migrations to DATABASE_URL and exits. Advisory-locked,
 * so running it from several replicas (or an init container per pod) at once is safe.
 */
export async function runMigrate(): Promise<void> {
  let url: string | undefined;
  try {
    url = loadBrokerConfig(process.env).databaseUrl;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(`berth migrate: ${err.message}`);
    process.exit(2);
  }
  if (!url) {
    console.error(
      'berth migrate: DATABASE_URL is required (postgres://user[:password]@host[:port]/database)',
    );
    process.exit(2);
  }
  const pool = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 10_000 });
  pool.on('error', () => {}); // an idle connection dropping here is reported by the failing query
  try {
    const r = await migrate(pool);
    console.log(
      r.applied
        ? `berth migrate: applied ${r.applied} migration(s) to ${redactUrl(url)} (${r.total} in total)`
        : `berth migrate: ${redactUrl(url)} is up to date (${r.total} migrations)`,
    );
  } catch (err) {
    console.error(`berth migrate: ${redactUrl(url)}: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  } finally {
    await pool.end();
  }
}
