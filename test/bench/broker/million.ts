/**
 * RSS of an in-memory `berth broker` while 1M messages are posted with the store's 256 MB byte cap
 * (issue 17, item 3): `node test/bench/broker/million.ts` (BERTH_NODE_FLAGS adds Node flags, e.g.
 * `--max-semi-space-size=16`; MILLION_LABEL names the run in million-results.json).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startBrokerProcess } from './process.ts';

/** Where the RSS goes at the end: V8 heap, off-heap buffers, the message store's slabs (MB). */
async function memoryOf(url: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const mb = (re: RegExp) => Math.round(Number(re.exec(text)?.[1] ?? 0) / 2 ** 20);
  return {
    'heap used (MB)': mb(/^nodejs_heap_size_used_bytes (\d+)/m),
    'external (MB)': mb(/^nodejs_external_memory_bytes (\d+)/m),
    'message slabs (MB)': mb(/^berth_broker_store_slab_bytes\{domain="messages"\} (\d+)/m),
    'messages counted (MB)': mb(/^berth_broker_store_bytes\{domain="messages"\} (\d+)/m),
  };
}

const label = process.env.MILLION_LABEL ?? 'current';
const broker = await startBrokerProcess({
  BERTH_NODE_FLAGS: process.env.BERTH_NODE_FLAGS ?? '',
  BROKER_MAX_MESSAGE_BYTES: String(256 * 1024 * 1024),
});
const pid = broker.proc.pid as number;
const rssMb = () =>
  Math.round(Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024);
const big = Array.from({ length: 1000 }, (_, i) => ({
  role: 'assistant',
  content: `stored message number ${i} with a little text`,
}));
const body = JSON.stringify({ conversation_id: 'million', query_id: 'q', messages: big });
const samples: number[] = [rssMb()];
let memory: Record<string, number> = {};
const t0 = performance.now();
try {
  for (let i = 0; i < 1000; i += 4) {
    await Promise.all(
      [0, 1, 2, 3].map(async () => {
        const r = await fetch(`${broker.url}/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
        if (r.status !== 201 && r.status !== 200) throw new Error(`POST /messages: ${r.status}`);
        await r.arrayBuffer();
      }),
    );
    if (i % 40 === 0) samples.push(rssMb());
  }
  samples.push(rssMb());
  memory = await memoryOf(broker.url);
} finally {
  broker.proc.kill('SIGTERM');
  await broker.exited;
}
const results = {
  'RSS idle (MB)': samples[0],
  'RSS max during 1M (MB)': Math.max(...samples),
  'RSS after 1M (MB)': samples.at(-1),
  'messages/s': Math.round(1_000_000 / ((performance.now() - t0) / 1000)),
  ...memory,
};
const file = join(import.meta.dirname, 'million-results.json');
const all = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
all[label] = { at: new Date().toISOString(), flags: process.env.BERTH_NODE_FLAGS ?? '', results };
writeFileSync(file, `${JSON.stringify(all, null, 2)}\n`);
console.log(label, results);
