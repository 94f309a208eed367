/**
 * `make bench` / `npm run bench`: every benchmark, one after another (they would distort each other
 * on 2 cores), each as its own process. `node test/bench/run.ts broker api` runs only those.
 * Figures are printed by each benchmark; the docs of each part record the measured ones.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const ALL: Record<string, string[]> = {
  broker: ['broker/run.ts'],
  controller: ['controller/run.ts'],
  engine: ['engine/run.ts', 'engine/e2e.ts'],
  api: ['api/run.ts'],
  chat: ['chat/run.ts'],
};
const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !(w in ALL));
if (unknown.length > 0) {
  console.error(`unknown benchmark(s): ${unknown.join(', ')}; known: ${Object.keys(ALL).join(', ')}`);
  process.exit(2);
}
let failed = 0;
for (const name of wanted.length > 0 ? wanted : Object.keys(ALL)) {
  for (const script of ALL[name] ?? []) {
    console.log(`\n=== ${name}: test/bench/${script}`);
    const r = spawnSync(process.execPath, [join(import.meta.dirname, script)], { stdio: 'inherit' });
    if (r.status !== 0) {
      failed++;
      console.error(`=== ${script} exited with ${r.status ?? r.signal}`);
    }
  }
}
process.exit(failed > 0 ? 1 : 0);
