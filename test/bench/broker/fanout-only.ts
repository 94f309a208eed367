/**
 * The SSE fan-out scenario alone, for tuning: `SSE_FLUSH_MS=… node test/bench/broker/fanout-only.ts`
 * (WATCHERS, RATE, BENCH_SECONDS). The broker runs as its own process with the caller's environment.
 */
import { spawnBerth } from '../../support/process.ts';
import { fanOut } from './fanout.ts';

const broker = spawnBerth(['broker', '--port', '0'], { ...process.env, LOG_LEVEL: 'info' });
process.on('exit', () => broker.proc.kill('SIGKILL'));
const line = await broker.waitForLine(/"msg":"broker listening"/, 30_000).catch(async () => {
  // LOG_LEVEL=warn hides the listening line; fall back to info for the port.
  throw new Error(broker.output());
});
const url = `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`;
const r = await fanOut(url, {
  watchers: Number(process.env.WATCHERS ?? 1000),
  rate: Number(process.env.RATE ?? 200),
  seconds: Number(process.env.BENCH_SECONDS ?? 10),
});
console.log(JSON.stringify({ flushMs: process.env.SSE_FLUSH_MS ?? 'default', ...r }));
broker.proc.kill('SIGTERM');
await broker.exited;
if (process.env.BERTH_NODE_FLAGS) console.log(broker.output());
