/**
 * Worker thread of the fan-out benchmark: holds the SSE watchers on its own event loop, so reading
 * 1,000 streams does not delay the publisher's send timestamps (and vice versa).
 */
import http from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';

const { url, watchers } = workerData as { url: string; watchers: number };
const agent = new http.Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
const latencies: number[] = [];
const reqs: http.ClientRequest[] = [];
let connected = 0;

// Connections open in batches, each waiting for the previous one's first bytes: 5,000 connects at
// once overflow the server's accept backlog, and the retried SYNs stall the benchmark for seconds.
const BATCH = 250;
function open(): Promise<void> {
  return new Promise((resolve) => {
    const req = http.get(`${url}/messages?watch=true&conversation_id=fan`, { agent }, (res) => {
      res.setEncoding('utf8');
      let first = true;
      res.on('data', (text: string) => {
        if (first) {
          first = false;
          resolve();
          if (++connected === watchers) parentPort?.postMessage({ type: 'ready' });
        }
        const now = performance.timeOrigin + performance.now();
        for (const m of text.matchAll(/"content":"t(\d+\.?\d*)"/g)) latencies.push(now - Number(m[1]));
      });
    });
    reqs.push(req);
  });
}
for (let i = 0; i < watchers; i += BATCH)
  await Promise.all(Array.from({ length: Math.min(BATCH, watchers - i) }, () => open()));

parentPort?.on('message', (m: { type: string }) => {
  if (m.type === 'count') parentPort?.postMessage({ type: 'count', received: latencies.length });
  if (m.type === 'stop') {
    for (const r of reqs) r.destroy();
    agent.destroy();
    parentPort?.postMessage({ type: 'done', latencies });
  }
});
