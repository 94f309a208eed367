/**
 * OTLP/JSON ingest on a fresh in-memory `berth broker`: `node test/bench/broker/otlp.ts`
 * (BENCH_SECONDS, default 10). Bare 100-span exports and agent-shaped 20-span exports
 * (otlp-shapes.ts), autocannon with 20 connections. Writes otlp-results.json (keyed by
 * OTLP_BENCH_LABEL, so before/after runs sit side by side).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { agentExport, bareExport } from './otlp-shapes.ts';
import { startBrokerProcess } from './process.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const label = process.env.OTLP_BENCH_LABEL ?? 'current';
const results: Record<string, number> = {};
const broker = await startBrokerProcess({ BERTH_NODE_FLAGS: process.env.BERTH_NODE_FLAGS ?? '' });
try {
  for (const [name, body, spans] of [
    ['bare 100-span exports', bareExport(100), 100],
    ['agent-shaped 20-span exports', agentExport(7), 20],
  ] as const) {
    console.log(`[bench] OTLP ${name} (${body.length} bytes each)`);
    const run = await autocannon({
      url: `${broker.url}/v1/traces`,
      connections: 20,
      duration: SECONDS,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    if (run.non2xx) throw new Error(`${run.non2xx} non-2xx answers`);
    results[`OTLP ${name}: spans/s`] = Math.round(run.requests.average * spans);
    results[`OTLP ${name}: p99 (ms)`] = run.latency.p99;
    await fetch(`${broker.url}/traces`, { method: 'DELETE' });
  }
} finally {
  broker.proc.kill('SIGTERM');
  await broker.exited;
}
const file = join(import.meta.dirname, 'otlp-results.json');
const all = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
all[label] = { at: new Date().toISOString(), seconds: SECONDS, results };
writeFileSync(file, `${JSON.stringify(all, null, 2)}\n`);
const width = Math.max(...Object.keys(results).map((k) => k.length));
console.log(`\nOTLP ingest (${label}, ${SECONDS} s phases)\n`);
for (const [k, v] of Object.entries(results)) console.log(`${k.padEnd(width)}  ${v}`);
