/**
 * The SSE fan-out scenario alone, for tuning: `SSE_FLUSH_MS=… node test/bench/broker/fanout-only.ts`
 * (WATCHERS, RATE, BENCH_SECONDS). The broker runs as its own process with the caller's environment.
 */
import { fanOut } from './fanout.ts';
import { startBrokerProcess } from './process.ts';

const broker = await startBrokerProcess();
process.on('exit', () => broker.proc.kill('SIGKILL'));
const url = broker.url;
const r = await fanOut(url, {
  watchers: Number(process.env.WATCHERS ?? 1000),
  rate: Number(process.env.RATE ?? 200),
  seconds: Number(process.env.BENCH_SECONDS ?? 10),
});
console.log(JSON.stringify({ flushMs: process.env.SSE_FLUSH_MS ?? 'default', ...r }));
broker.proc.kill('SIGTERM');
await broker.exited;
if (process.env.BERTH_NODE_FLAGS) console.log(broker.output());
