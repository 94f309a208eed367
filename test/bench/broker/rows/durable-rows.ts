/**
 * The durable rows of issue 32's table: messages and events in PostgreSQL, chunks in Redis, sessions
 * in memory (as the reference keeps them). Each round gets a fresh database, migrated by the
 * checkout's own `berth migrate`, and a fresh Redis key prefix; both are removed afterwards (the
 * machine's PostgreSQL and Redis are shared: nothing else is touched). With one broker process and
 * with two (load split across both; SSE watchers on the other replica than the writes).
 */
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { spawnProcess } from '../../../support/process.ts';
import { type BrokerProc, settledRss, startBrokerAt } from './broker.ts';
import { deliveryRow, type Figures, fanOutRow, getRow, ndjsonRow, postRow, seedRow } from './memory-rows.ts';

const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export async function durableRows(root: string, seconds: number): Promise<Figures> {
  const db = `berth_rows_${Date.now()}`;
  const u = new URL(ADMIN_URL);
  u.pathname = `/${db}`;
  const env = {
    MESSAGE_BACKEND: 'postgres',
    EVENT_BACKEND: 'postgres',
    SESSIONS_BACKEND: 'memory',
    CHUNK_BACKEND: 'redis',
    DATABASE_URL: u.toString(),
    REDIS_URL,
    REDIS_KEY_PREFIX: db,
  };
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  const out: Figures = {};
  const brokers: BrokerProc[] = [];
  const start = async () => {
    const b = await startBrokerAt(root, env);
    brokers.push(b);
    return b;
  };
  const purge = async (b: BrokerProc) => {
    for (const path of ['/messages', '/stream', '/events'])
      await fetch(`${b.url}${path}`, { method: 'DELETE' }).then((r) => r.arrayBuffer());
  };
  try {
    await admin.query(`CREATE DATABASE ${db}`);
    const migrate = spawnProcess(process.execPath, [join(root, 'dist', 'cmd', 'berth.js'), 'migrate'], {
      cwd: root,
      env: { ...process.env, ...env },
    });
    if ((await migrate.exited) !== 0) throw new Error(`berth migrate failed:\n${migrate.output()}`);
    const a = await start();
    out['idle RSS (MB)'] = await settledRss(a);
    Object.assign(out, await postRow(a, seconds));
    Object.assign(out, await seedRow(a, seconds));
    await purge(a);
    Object.assign(out, await getRow(a, seconds));
    Object.assign(out, await fanOutRow(a, seconds, 200, 200));
    Object.assign(out, await fanOutRow(a, seconds, 1000, 200));
    Object.assign(out, await deliveryRow(a, seconds, 50));
    Object.assign(out, await deliveryRow(a, seconds, 50, { write: 'ndjson' }));
    Object.assign(out, await ndjsonRow(a));
    await purge(a);
    // Two replicas: the same load split across both, watchers on the replica that is not written.
    const b = await start();
    const two = (f: Figures) =>
      Object.fromEntries(Object.entries(f).map(([k, v]) => [`two brokers: ${k}`, v]));
    Object.assign(out, two(await postRow(a, seconds, [a.url, b.url])));
    Object.assign(out, two(await fanOutRow(b, seconds, 200, 200, a.url)));
    Object.assign(out, two(await deliveryRow(a, seconds, 50, { watchUrl: b.url })));
    Object.assign(out, two(await deliveryRow(a, seconds, 50, { watchUrl: b.url, write: 'ndjson' })));
    out['RSS after, first broker (MB)'] = a.rssMb();
  } finally {
    for (const b of brokers) await b.stop();
    await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
    await admin.end();
    const redis = new Redis(REDIS_URL);
    for await (const keys of redis.scanStream({ match: `${db}*`, count: 1000 }) as AsyncIterable<string[]>)
      if (keys.length) await redis.del(...keys);
    redis.disconnect();
  }
  return out;
}
