/**
 * What PostgreSQL's plan cache mode costs the POST /messages batch statement (APPEND_BATCH), alone
 * on one connection of a fresh migrated database: ms per batch with the default mode (`auto`, which
 * re-plans this statement at every execution) and with `force_generic_plan` (the writer connection,
 * pkg/broker/pg/writer.ts), alternating BENCH_ROUNDS times (default 2), for batches of
 * BENCH_BATCHES appends (default `1,24,100`; one short message each).
 * `node test/bench/broker/append-plan.ts` (DATABASE_URL defaults to the local service).
 */
import { join } from 'node:path';
import pg from 'pg';
import { APPEND_BATCH } from '../../../pkg/broker/messages/pg-batch-sql.ts';
import { recordTail } from '../../../pkg/broker/messages/record-json.ts';
import { projectRoot } from '../../../pkg/kube/controlplane/index.ts';
import { spawnProcess } from '../../support/process.ts';

const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const SIZES = (process.env.BENCH_BATCHES ?? '1,24,100').split(',').map(Number);
const MODES = ['auto', 'force_generic_plan'] as const;

const db = `berth_plan_${Date.now()}`;
const u = new URL(ADMIN_URL);
u.pathname = `/${db}`;
const admin = new pg.Client({ connectionString: ADMIN_URL });
await admin.connect();
await admin.query(`CREATE DATABASE ${db}`);
const client = new pg.Client({ connectionString: u.toString() });
try {
  const root = projectRoot();
  const migrate = spawnProcess(process.execPath, [join(root, 'dist', 'cmd', 'berth.js'), 'migrate'], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: u.toString() },
  });
  if ((await migrate.exited) !== 0) throw new Error(`berth migrate failed:\n${migrate.output()}`);
  await client.connect();
  const results: Record<string, number[]> = {};
  for (let round = 0; round < ROUNDS; round++)
    for (const n of SIZES)
      for (const mode of MODES) {
        await client.query(`SET plan_cache_mode = ${mode}`);
        const name = `plan_${mode}_${n}_${round}`;
        const runs = Math.max(50, Math.round(3000 / n));
        const start = performance.now();
        for (let i = 0; i < runs; i++) await client.query({ name, text: APPEND_BATCH, values: batch(n) });
        const ms = (performance.now() - start) / runs;
        const key = `${n} appends, ${mode} (ms per batch)`;
        results[key] = [...(results[key] ?? []), Math.round(ms * 100) / 100];
      }
  console.log(JSON.stringify(results, null, 1));
} finally {
  await client.end().catch(() => {});
  await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
  await admin.end();
}

/** The statement's parameters for `n` appends of one message each to one conversation. */
function batch(n: number): unknown[] {
  const at = new Date().toISOString();
  const tail = recordTail(
    at,
    'bench',
    'bench-q',
  )({ role: 'user', content: 'What is the capital of France?' });
  const col = <T>(v: T) => Array.from({ length: n }, () => v);
  return [['bench'], [at], col('bench'), col('bench-q'), col(at), col(3600), col(tail)];
}
