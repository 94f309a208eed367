/**
 * Engine overhead per query: `engine.run()` wall time against a fake model that answers instantly
 * (real HTTPS with a test CA), 500 queries at concurrency 20 after a warm-up. Scenarios:
 *   model        model target, no memory, no broker          — the engine's own cost
 *   agent+broker agent target with Memory (history read + append), events, spans and streaming
 *                chunks through a real broker (BROKER_URL, else `berth broker` in its own process)
 * Target (issue 5): p50 ≤ 30 ms, p99 ≤ 100 ms. Usage: node test/bench/engine/run.ts [--queries N] [--concurrency N]
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import type { Query } from '../../../pkg/api/index.ts';
import { createQueryEngine } from '../../../pkg/engine/index.ts';
import { createLogger } from '../../../pkg/log/index.ts';
import { agent, freePort, MapLookup, memory, model, query } from '../../engine/support.ts';

const { values } = parseArgs({
  options: { queries: { type: 'string', default: '500' }, concurrency: { type: 'string', default: '20' } },
});
const TOTAL = Number(values.queries);
const CONCURRENCY = Number(values.concurrency);
const WARMUP = 100;

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

async function measure(label: string, run: (i: number) => Promise<string>): Promise<void> {
  // Warm-up at full concurrency: connections to the model (TLS) and broker are open as in steady state.
  await Promise.all(Array.from({ length: WARMUP }, (_, i) => run(-1 - i)));
  const times: number[] = [];
  const phases = new Map<string, number>();
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < TOTAL) {
        const i = next++;
        const s = performance.now();
        const phase = await run(i);
        times.push(performance.now() - s);
        phases.set(phase, (phases.get(phase) ?? 0) + 1);
      }
    }),
  );
  const wall = performance.now() - t0;
  times.sort((a, b) => a - b);
  const f = (n: number) => n.toFixed(1);
  console.log(
    `${label.padEnd(14)} n=${TOTAL} c=${CONCURRENCY}  p50 ${f(pct(times, 50))} ms  p90 ${f(pct(times, 90))} ms  p99 ${f(pct(times, 99))} ms  max ${f(times.at(-1) ?? 0)} ms  ${f((TOTAL / wall) * 1000)} q/s  phases ${JSON.stringify(Object.fromEntries(phases))}`,
  );
}

/** The broker: BROKER_URL, else `berth broker` started on a free port (undefined when it does not start). */
async function broker(): Promise<{ url: string; stop: () => void } | undefined> {
  if (process.env.BROKER_URL) return { url: process.env.BROKER_URL, stop: () => {} };
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [join(import.meta.dirname, '../../../cmd/berth.ts'), 'broker', '--port', String(port)],
    {
      stdio: 'ignore',
      env: { ...process.env, LOG_LEVEL: 'warn' },
    },
  );
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300 && child.exitCode === null; i++) {
    if ((await fetch(`${url}/health`).catch(() => undefined))?.ok)
      return { url, stop: () => child.kill('SIGTERM') };
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGTERM');
  return undefined;
}

/** The fake model in a child process, as a remote model would be: its CPU is not the engine's. */
async function fakeModelProcess(): Promise<{ url: string; ca: string; close: () => void }> {
  const child = spawn(process.execPath, [join(import.meta.dirname, '../../fixtures/fake-model-process.ts')], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const [line] = (await once(createInterface({ input: child.stdout as NodeJS.ReadableStream }), 'line')) as [
    string,
  ];
  const info = JSON.parse(line) as { url: string; ca: string };
  return { ...info, close: () => child.kill('SIGTERM') };
}

const fake = await fakeModelProcess();
const lookup = new MapLookup()
  .put('model', model('default', { baseUrl: fake.url }))
  .put('agent', agent('bench', {}));
const logger = createLogger({ level: 'silent' });
console.log(
  `engine overhead — fake model (own process) answering instantly over HTTPS, node ${process.version}`,
);

const bare = createQueryEngine({ lookup, ca: fake.ca, logger });
await measure(
  'model',
  async (i) =>
    (
      await bare.run(query({ type: 'model', name: 'default' }, `q${i}`), {
        signal: new AbortController().signal,
      })
    ).phase,
);
await bare.close();

const b = await broker();
if (!b) {
  console.log('agent+broker   skipped: no broker (set BROKER_URL; `berth broker` did not start)');
} else {
  lookup.put('memory', memory('default', b.url));
  const full = createQueryEngine({ lookup, ca: fake.ca, logger, brokerUrl: b.url });
  const withConversation = (q: Query, i: number): Query => {
    q.metadata.annotations = { 'berth.dev/streaming-enabled': 'true' };
    q.spec.sessionId = `bench-${i % 20}`;
    return q;
  };
  await measure(
    'agent+broker',
    async (i) =>
      (
        await full.run(withConversation(query({ type: 'agent', name: 'bench' }, `q${i}`), i), {
          signal: new AbortController().signal,
        })
      ).phase,
  );
  const t = performance.now();
  await full.flush();
  console.log(
    `flush of events and spans after the run: ${(performance.now() - t).toFixed(0)} ms; events ${JSON.stringify(full.stats().events)}`,
  );
  await full.close();
  b.stop();
}
fake.close();
