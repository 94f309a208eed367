/**
 * Issue 32's table, row by row, for one or more checkouts side by side:
 * `node test/bench/broker/rows.ts` — BENCH_ROOTS=`label=/path,label=/path` (default: this checkout
 * as `current`; each must have `dist/` from `npm run build`), BENCH_ROUNDS (default 2) alternating
 * rounds, BENCH_SECONDS per load phase (default 10), BENCH_ROWS (comma list of idle, delivery, ingest,
 * get, fanout, durable; default all). Every row runs on fresh broker processes (in memory unless the
 * row is `durable`), started with the manifests' `--max-semi-space-size=16`. Prints each round and
 * the best and worst of the rounds per figure; writes rows-results.json beside this file keyed by
 * label. The machine must be quiet: anything else running moves the tail figures.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../../pkg/kube/controlplane/index.ts';
import { startBrokerAt } from './rows/broker.ts';
import { durableRows } from './rows/durable-rows.ts';
import { type Figures, MEMORY_ROWS } from './rows/memory-rows.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const roots = (process.env.BENCH_ROOTS ?? `current=${projectRoot()}`).split(',').map((s) => {
  const [label, path] = s.split('=') as [string, string];
  if (!existsSync(join(path, 'dist', 'cmd', 'berth.js')))
    throw new Error(`${path}: no dist/ (npm run build)`);
  return { label, path };
});
const ROWS = (process.env.BENCH_ROWS ?? 'idle,delivery,ingest,get,fanout,durable').split(',');

const rounds: Record<string, Figures[]> = Object.fromEntries(roots.map((r) => [r.label, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const { label, path } of round % 2 ? [...roots].reverse() : roots) {
    const figures: Figures = {};
    for (const row of ROWS) {
      console.log(`[rows] round ${round + 1} ${label}: ${row}`);
      if (row === 'durable') {
        for (const [k, v] of Object.entries(await durableRows(path, SECONDS))) figures[`durable: ${k}`] = v;
        continue;
      }
      const run = MEMORY_ROWS[row];
      if (!run) throw new Error(`unknown row ${row}`);
      Object.assign(figures, await run({ seconds: SECONDS, broker: () => startBrokerAt(path) }));
    }
    rounds[label]?.push(figures);
    console.log(JSON.stringify({ round: round + 1, label, figures }, null, 1));
  }
}

const file = join(import.meta.dirname, 'rows-results.json');
const all = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
for (const { label } of roots) {
  const runs = rounds[label] ?? [];
  const keys = [...new Set(runs.flatMap((f) => Object.keys(f)))];
  all[label] = {
    at: new Date().toISOString(),
    seconds: SECONDS,
    rounds: ROUNDS,
    figures: Object.fromEntries(keys.map((k) => [k, runs.map((f) => f[k])])),
  };
}
writeFileSync(file, `${JSON.stringify(all, null, 2)}\n`);
const keys = [...new Set(Object.values(rounds).flatMap((runs) => runs.flatMap((f) => Object.keys(f))))];
const width = Math.max(...keys.map((k) => k.length));
console.log(`\n${'row'.padEnd(width)}  ${roots.map((r) => r.label.padStart(24)).join('')}`);
for (const k of keys)
  console.log(
    `${k.padEnd(width)}  ${roots
      .map((r) =>
        (rounds[r.label] ?? [])
          .map((f) => f[k])
          .join(' / ')
          .padStart(24),
      )
      .join('')}`,
  );
