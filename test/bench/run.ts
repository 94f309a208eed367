/**
 * `make bench` / `npm run bench`: every benchmark, one after another (they would distort each other
 * on 2 cores), each as its own process. `node test/bench/run.ts broker api` runs only those.
 * Each benchmark prints its figures and writes its own results file; at the end this collects the
 * results files of the run into `test/bench/summary.json` and prints them as one table.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const ALL: Record<string, string[]> = {
  broker: ['broker/run.ts', 'broker/sse-latency.ts', 'broker/otlp.ts'],
  // Idle RSS of `berth broker` with and without BROKER_AUTH (from dist/ when built).
  footprint: ['broker/footprint.ts'],
  // PostgreSQL and Redis of this machine (DATABASE_URL / REDIS_URL): fresh databases and key prefixes.
  durable: ['broker/durable.ts', 'broker/redis-chunks.ts'],
  controller: ['controller/run.ts'],
  engine: ['engine/run.ts', 'engine/e2e.ts', 'engine/hostile-model.ts'],
  api: ['api/run.ts'],
  // API latency while 20 clients send hostile paths, headers and bodies (log redaction's cost).
  hostile: ['api/hostile-paths.ts'],
  log: ['log/redact.ts'],
  chat: ['chat/run.ts'],
  // An MCP tool call through the engine vs the SDK client directly, both protocol revisions.
  mcp: ['mcp/run.ts'],
  // Dashboard page loads in Chromium on `berth up` with 1,000 queries (target < 300 ms).
  dashboard: ['dashboard/page-loads.ts'],
};
const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !(w in ALL));
if (unknown.length > 0) {
  console.error(`unknown benchmark(s): ${unknown.join(', ')}; known: ${Object.keys(ALL).join(', ')}`);
  process.exit(2);
}
/** Where each benchmark leaves its figures (some keep several labelled runs: the latest counts). */
const RESULTS: Record<string, string> = {
  'broker/run.ts': 'broker/results.json',
  'broker/sse-latency.ts': 'broker/sse-latency-results.json',
  'broker/otlp.ts': 'broker/otlp-results.json',
  'broker/footprint.ts': 'broker/footprint-results.json',
  'broker/durable.ts': 'broker/durable-results.json',
  'broker/redis-chunks.ts': 'broker/redis-chunks-results.json',
  'api/run.ts': 'api/results.json',
  'api/hostile-paths.ts': 'api/hostile-results.json',
  'log/redact.ts': 'log/results.json',
  'engine/hostile-model.ts': 'engine/hostile-model-results.json',
  'mcp/run.ts': 'mcp/results.json',
  'dashboard/page-loads.ts': 'dashboard/results.json',
};

function figures(file: string): Record<string, unknown> {
  const data = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  if (data.results && typeof data.results === 'object') return data.results as Record<string, unknown>;
  // Labelled runs ({label: {at, results}}): the most recent one.
  const runs = Object.values(data).filter((v): v is { at: string; results: Record<string, unknown> } =>
    Boolean(v && typeof v === 'object' && 'results' in v),
  );
  runs.sort((a, b) => a.at.localeCompare(b.at));
  return runs.at(-1)?.results ?? data;
}

let failed = 0;
const summary: Record<string, Record<string, unknown>> = {};
for (const name of wanted.length > 0 ? wanted : Object.keys(ALL)) {
  for (const script of ALL[name] ?? []) {
    console.log(`\n=== ${name}: test/bench/${script}`);
    const started = Date.now();
    const r = spawnSync(process.execPath, [join(import.meta.dirname, script)], { stdio: 'inherit' });
    if (r.status !== 0) {
      failed++;
      console.error(`=== ${script} exited with ${r.status ?? r.signal}`);
      continue;
    }
    const file = RESULTS[script] && join(import.meta.dirname, RESULTS[script]);
    if (file && existsSync(file) && statSync(file).mtimeMs >= started) summary[script] = figures(file);
  }
}
writeFileSync(
  join(import.meta.dirname, 'summary.json'),
  `${JSON.stringify({ at: new Date().toISOString(), results: summary }, null, 2)}\n`,
);
console.log('\n=== summary (test/bench/summary.json)');
const rows = Object.entries(summary).flatMap(([script, r]) =>
  Object.entries(r).map(([k, v]) => [
    `${script}: ${k}`,
    String(typeof v === 'object' ? JSON.stringify(v) : v),
  ]),
);
const width = Math.max(0, ...rows.map(([k]) => (k as string).length));
for (const [k, v] of rows) console.log(`${(k as string).padEnd(width)}  ${v}`);
process.exit(failed > 0 ? 1 : 0);
