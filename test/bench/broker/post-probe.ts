/**
 * Where the CPU of POST /messages on PostgreSQL goes, and how fast it is from a fresh broker: per
 * checkout of BENCH_ROOTS (`label=/path,…`, each built with `npm run build`; default this one), a
 * fresh database and a fresh broker (from `dist/`, the manifests' Node flags), then BENCH_RUNS
 * autocannon runs of BENCH_SECONDS at c=BENCH_CONNECTIONS on that broker (the first is the fresh
 * process, the others warm), the checkouts alternating BENCH_ROUNDS times. Each run reports req/s,
 * p99 and the CPU of the broker, of every PostgreSQL backend and of this load generator (from /proc).
 * SESSIONS_BACKEND defaults to `memory` (issue 32's durable rows; `postgres` adds the roll-up).
 * `node test/bench/broker/post-probe.ts` (a diagnostic beside durable.ts and rows.ts).
 */
import { execSync } from 'node:child_process';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { projectRoot } from '../../../pkg/kube/controlplane/index.ts';
import { spawnProcess } from '../../support/process.ts';
import { cpuSeconds } from '../support.ts';
import { BENCH_POST } from './process.ts';
import { startBrokerAt } from './rows/broker.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const RUNS = Number(process.env.BENCH_RUNS ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const roots = (process.env.BENCH_ROOTS ?? `current=${projectRoot()}`).split(',').map((s) => {
  const [label, path] = s.split('=');
  return { label: label as string, path: path as string };
});

const pgPids = () =>
  execSync('pgrep -f "postgres: " || true').toString().trim().split('\n').filter(Boolean).map(Number);
/** CPU seconds of every PostgreSQL backend alive now (one that exits meanwhile counts 0). */
const pgCpu = () =>
  pgPids().reduce((s, pid) => {
    try {
      return s + cpuSeconds(pid);
    } catch {
      return s;
    }
  }, 0);
const ownCpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

const admin = new pg.Client({ connectionString: ADMIN_URL });
await admin.connect();
try {
  for (let round = 1; round <= ROUNDS; round++)
    for (const root of roots) {
      const db = `berth_probe_${Date.now()}`;
      const u = new URL(ADMIN_URL);
      u.pathname = `/${db}`;
      const env = {
        MESSAGE_BACKEND: 'postgres',
        EVENT_BACKEND: 'postgres',
        SESSIONS_BACKEND: process.env.SESSIONS_BACKEND ?? 'memory',
        DATABASE_URL: u.toString(),
      };
      await admin.query(`CREATE DATABASE ${db}`);
      try {
        const migrate = spawnProcess(
          process.execPath,
          [join(root.path, 'dist', 'cmd', 'berth.js'), 'migrate'],
          {
            cwd: root.path,
            env: { ...process.env, ...env },
          },
        );
        if ((await migrate.exited) !== 0) throw new Error(migrate.output());
        const broker = await startBrokerAt(root.path, env);
        try {
          for (let run = 1; run <= RUNS; run++)
            console.log(JSON.stringify({ round, root: root.label, run, ...(await probe(broker)) }));
        } finally {
          await broker.stop();
        }
      } finally {
        await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
      }
    }
} finally {
  await admin.end();
}

async function probe(broker: { url: string; pid: number }) {
  const b0 = cpuSeconds(broker.pid);
  const p0 = pgCpu();
  const g0 = ownCpu();
  const run = await autocannon({
    url: `${broker.url}/messages`,
    connections: Number(process.env.BENCH_CONNECTIONS ?? 50),
    duration: SECONDS,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(BENCH_POST),
  });
  const share = (cpu: number) => Math.round((cpu / SECONDS) * 100);
  return {
    reqPerSec: Math.round(run.requests.average),
    p99: run.latency.p99,
    non2xx: run.non2xx,
    brokerCpuPct: share(cpuSeconds(broker.pid) - b0),
    postgresCpuPct: share(pgCpu() - p0),
    loadGeneratorCpuPct: share(ownCpu() - g0),
  };
}
