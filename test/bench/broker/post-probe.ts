/**
 * Where the CPU of POST /messages on PostgreSQL goes: one durable broker, autocannon for
 * BENCH_SECONDS, CPU seconds of the broker and of all postgres backends sampled from /proc.
 * `node test/bench/broker/post-probe.ts` (a diagnostic beside durable.ts).
 */
import { execSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import pg from 'pg';
import { spawnBerth } from '../../support/process.ts';
import { BENCH_POST, startBrokerProcess } from './process.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const db = `berth_probe_${Date.now()}`;
const u = new URL(ADMIN_URL);
u.pathname = `/${db}`;
const admin = new pg.Client({ connectionString: ADMIN_URL });
await admin.connect();
await admin.query(`CREATE DATABASE ${db}`);
const migrate = spawnBerth(['migrate'], { ...process.env, DATABASE_URL: u.toString() });
if ((await migrate.exited) !== 0) throw new Error(migrate.output());
const broker = await startBrokerProcess({
  MESSAGE_BACKEND: 'postgres',
  EVENT_BACKEND: 'postgres',
  SESSIONS_BACKEND: 'postgres',
  DATABASE_URL: u.toString(),
});
const ticks = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return Number(f[11]) + Number(f[12]);
};
const pgPids = () =>
  execSync('pgrep -f "postgres: "').toString().trim().split('\n').map(Number).filter(Boolean);
const pgTicks = () =>
  pgPids().reduce(
    (s, p) =>
      s +
      (() => {
        try {
          return ticks(p);
        } catch {
          return 0;
        }
      })(),
    0,
  );
try {
  const b0 = ticks(broker.proc.pid as number);
  const p0 = pgTicks();
  const run = await autocannon({
    url: `${broker.url}/messages`,
    connections: Number(process.env.BENCH_CONNECTIONS ?? 50),
    duration: SECONDS,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(BENCH_POST),
  });
  const b1 = ticks(broker.proc.pid as number);
  const p1 = pgTicks();
  console.log({
    reqPerSec: Math.round(run.requests.average),
    p99: run.latency.p99,
    non2xx: run.non2xx,
    brokerCpuPct: Math.round((b1 - b0) / SECONDS),
    postgresCpuPct: Math.round((p1 - p0) / SECONDS),
  });
} finally {
  broker.proc.kill('SIGTERM');
  await broker.exited;
  await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
  await admin.end();
}
