/**
 * The broker benchmark's message scenarios on the durable backends (issue 11, item 8):
 * `node test/bench/broker/durable.ts` (BENCH_SECONDS per load phase, default 10; DATABASE_URL and
 * REDIS_URL default to the local services). Each run uses a fresh database, migrated by
 * `berth migrate`, and a fresh Redis key prefix; both are removed afterwards. Brokers run as their
 * own processes with MESSAGE/EVENT/SESSIONS_BACKEND=postgres and CHUNK_BACKEND=redis.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import pg from 'pg';
import { spawnBerth } from '../../support/process.ts';
import { fanOut } from './fanout.ts';
import { BENCH_POST, startBrokerProcess } from './process.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const FILL = Number(process.env.BENCH_FILL ?? 1_000_000);
const db = `berth_bench_${Date.now()}`;
const dbUrl = (() => {
  const u = new URL(ADMIN_URL);
  u.pathname = `/${db}`;
  return u.toString();
})();
const results: Record<string, number | string> = {};
const phase = (name: string) => console.log(`[bench] ${name}`);

const admin = new pg.Client({ connectionString: ADMIN_URL });
await admin.connect();
await admin.query(`CREATE DATABASE ${db}`);
const migrate = spawnBerth(['migrate'], { ...process.env, DATABASE_URL: dbUrl });
if ((await migrate.exited) !== 0) throw new Error(`berth migrate failed:\n${migrate.output()}`);

const env = {
  MESSAGE_BACKEND: 'postgres',
  EVENT_BACKEND: 'postgres',
  SESSIONS_BACKEND: 'postgres',
  CHUNK_BACKEND: 'redis',
  DATABASE_URL: dbUrl,
  REDIS_URL,
  REDIS_KEY_PREFIX: db,
};
const brokers = [await startBrokerProcess(env), await startBrokerProcess(env)];
const [a, b] = brokers as [Awaited<ReturnType<typeof startBrokerProcess>>, (typeof brokers)[number]];
process.on('exit', () => {
  for (const x of brokers) x.proc.kill('SIGKILL');
});
const rssMb = (pid: number | undefined) =>
  Math.round(Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024);
const post = (url: string, body: unknown) =>
  fetch(`${url}/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  }).then(async (r) => {
    if (r.status !== 201 && r.status !== 200)
      throw new Error(`POST /messages: ${r.status} ${await r.text()}`);
  });

try {
  phase('POST /messages');
  const postRun = await autocannon({
    url: `${a.url}/messages`,
    connections: 50,
    duration: SECONDS,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(BENCH_POST),
  });
  results['POST /messages req/s'] = Math.round(postRun.requests.average);
  results['POST /messages p99 (ms)'] = postRun.latency.p99;
  results['POST /messages non-2xx'] = postRun.non2xx;

  phase('GET /messages, 20k stored');
  await fetch(`${a.url}/messages`, { method: 'DELETE' });
  const batch = (n: number, text: string) =>
    Array.from({ length: n }, (_, i) => ({ role: 'user', content: `${text} ${i}` }));
  for (let i = 0; i < 20; i++)
    await post(a.url, { conversation_id: 'paging', query_id: 'q', messages: batch(1000, 'paging') });
  const get20k = await autocannon({ url: `${b.url}/messages?limit=100`, connections: 50, duration: SECONDS });
  results['GET /messages?limit=100 req/s (20k stored)'] = Math.round(get20k.requests.average);
  results['GET p99 (ms) (20k stored)'] = get20k.latency.p99;

  phase('SSE: 200 watchers on one replica');
  const same = await fanOut(a.url, { watchers: 200, rate: 200, seconds: SECONDS });
  results['SSE 200 watchers delivered'] = same.delivered.toFixed(4);
  results['SSE 200 watchers p50 (ms)'] = same.p50;
  results['SSE 200 watchers p99 (ms)'] = same.p99;

  phase('SSE across replicas: watchers on B, writes on A');
  const cross = await fanOut(b.url, { watchers: 200, rate: 200, seconds: SECONDS, postUrl: a.url });
  results['cross-replica SSE delivered'] = cross.delivered.toFixed(4);
  results['cross-replica SSE p50 (ms)'] = cross.p50;
  results['cross-replica SSE p99 (ms)'] = cross.p99;

  phase(`fill to ${FILL} messages, RSS sampled`);
  const rss: number[] = [rssMb(a.proc.pid)];
  const big = batch(1000, 'stored message number');
  for (let i = 0; i < FILL / 1000; i += 4) {
    await Promise.all(
      [0, 1, 2, 3].map(() => post(a.url, { conversation_id: 'million', query_id: 'q', messages: big })),
    );
    if (i % 100 === 0) rss.push(rssMb(a.proc.pid));
  }
  rss.push(rssMb(a.proc.pid));
  results['RSS during fill, first/max/last (MB)'] = `${rss[0]}/${Math.max(...rss)}/${rss.at(-1)}`;
  const getBig = await autocannon({ url: `${b.url}/messages?limit=100`, connections: 50, duration: SECONDS });
  results[`GET /messages?limit=100 req/s (${FILL + 20_000} stored)`] = Math.round(getBig.requests.average);
  results['GET p99 (ms) (large)'] = getBig.latency.p99;
} finally {
  for (const x of brokers) {
    x.proc.kill('SIGTERM');
    await x.exited;
  }
  await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
  await admin.end();
  const redis = new Redis(REDIS_URL);
  for await (const keys of redis.scanStream({ match: `${db}*`, count: 1000 }) as AsyncIterable<string[]>)
    if (keys.length) await redis.del(...keys);
  redis.disconnect();
}

const width = Math.max(...Object.keys(results).map((k) => k.length));
console.log(`\nDurable broker benchmark (${SECONDS} s phases; PostgreSQL + Redis on this machine)\n`);
for (const [k, v] of Object.entries(results)) console.log(`${k.padEnd(width)}  ${v}`);
writeFileSync(
  join(import.meta.dirname, 'durable-results.json'),
  `${JSON.stringify({ at: new Date().toISOString(), seconds: SECONDS, results }, null, 2)}\n`,
);
