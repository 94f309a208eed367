/**
 * `node test/bench/broker/floor.ts` — the chunk-delivery row (50 streams × 50 chunks/s) on
 * `berth broker` (this checkout's `dist/`, in memory) and on `floor-server.ts` (node:http and nothing
 * else), fresh processes, alternating, BENCH_ROUNDS rounds of BENCH_SECONDS. Both with the manifests'
 * `--max-semi-space-size=16`. What the floor server cannot do below is this machine's share of the tail.
 * BENCH_WRITE=ndjson: each stream one NDJSON upload (as the engine writes) instead of a POST per chunk;
 * BENCH_WRITE=lean: a POST per chunk from the minimal client (`leanChunkPoster`).
 */
import { join } from 'node:path';
import { projectRoot } from '../../../pkg/kube/controlplane/index.ts';
import { spawnProcess } from '../../support/process.ts';
import { cpuSeconds } from '../support.ts';
import { chunkDeliveryInChild, type DeliveryResult } from './chunk-delivery.ts';
import { startBrokerAt } from './rows/broker.ts';

const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const streams = Number(process.env.BENCH_STREAMS ?? 50);
// BENCH_WRITE=ndjson: the writers stream NDJSON lines of one upload each; lean: a POST per chunk
// from the minimal client (see ChunkWrite).
const write = (['ndjson', 'lean'] as const).find((w) => w === process.env.BENCH_WRITE) ?? 'post';

async function floorServer(mode = '') {
  const proc = spawnProcess(
    process.execPath,
    [
      ...(process.env.FLOOR_NODE_FLAGS ?? '--max-semi-space-size=16').split(' '),
      join(import.meta.dirname, 'floor-server.ts'),
    ],
    { cwd: projectRoot(), env: { ...process.env, FLOOR_MODE: mode } },
  );
  const line = await proc.waitForLine(/"msg":"broker listening"/, 30_000);
  const url = `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`;
  return {
    url,
    pid: proc.proc.pid as number,
    stop: async () => {
      proc.proc.kill('SIGTERM');
      await proc.exited;
    },
  };
}

type Row = DeliveryResult & { cpuMs: number };
const show = (d: Row) =>
  `p50 ${d.p50} p99 ${d.p99} p999 ${d.p999} max ${d.max} ms, delivered ${d.delivered}, server CPU ${d.cpuMs} ms`;

// BENCH_SERVERS: which to run (floor, hono, berth, berth=<checkout>), in the first round's order (the
// order is reversed every other round).
const servers = (process.env.BENCH_SERVERS ?? 'floor,hono,berth').split(',');
const results: Record<string, Row[]> = Object.fromEntries(servers.map((s) => [s, []]));
for (let r = 0; r < rounds; r++) {
  for (const which of r % 2 ? [...servers].reverse() : servers) {
    // `berth=<path>`: the broker of another checkout (built), e.g. the tree before a change.
    const server = which.startsWith('berth')
      ? await startBrokerAt(which.split('=')[1] ?? projectRoot())
      : await floorServer(which === 'hono' ? 'hono' : '');
    try {
      // CPU time of the server for the run: at the same load it compares the cost per chunk with far
      // less spread than the tail.
      const cpuBefore = cpuSeconds(server.pid);
      const delivered = await chunkDeliveryInChild(server.url, { streams, rate: 50, seconds, write });
      const d = { ...delivered, cpuMs: Math.round((cpuSeconds(server.pid) - cpuBefore) * 1000) };
      results[which]?.push(d);
      console.log(`round ${r + 1} ${which}: ${show(d)}`);
    } finally {
      await server.stop();
    }
  }
}
console.log(JSON.stringify(results));
