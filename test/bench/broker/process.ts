import http from 'node:http';
import { join } from 'node:path';
import { projectRoot } from '../../../pkg/kube/controlplane/index.ts';
import { spawnBerth, spawnProcess } from '../../support/process.ts';

/**
 * `berth broker` as its own process on a free port, logging at info (the port comes from its log).
 * BENCH_FROM_DIST=1 runs the built `dist/cmd/berth.js` (`npm run build`), as the image does, with
 * BERTH_NODE_FLAGS as Node flags; otherwise the TypeScript source.
 */
export async function startBrokerProcess(env: NodeJS.ProcessEnv = {}) {
  const all: NodeJS.ProcessEnv = { ...process.env, ...env, LOG_LEVEL: 'info' };
  const args = ['broker', '--port', '0'];
  const flags = all.BERTH_NODE_FLAGS?.split(' ').filter(Boolean) ?? [];
  const root = projectRoot();
  const proc =
    process.env.BENCH_FROM_DIST === '1'
      ? spawnProcess(process.execPath, [...flags, join(root, 'dist', 'cmd', 'berth.js'), ...args], {
          cwd: root,
          env: all,
        })
      : spawnBerth(args, all);
  const line = await proc.waitForLine(/"msg":"broker listening"/, 30_000);
  const url = `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`;
  return { proc: proc.proc, exited: proc.exited, output: () => proc.output(), url };
}

/** The POST /messages body of the durable benchmarks: one short user message of one query. */
export const BENCH_POST = {
  conversation_id: 'bench',
  query_id: 'bench-q',
  messages: [{ role: 'user', content: 'What is the capital of France? Answer in one word.' }],
};

/** POSTs one JSON chunk at a time to `/stream/{query}` over one kept-alive connection. */
export function chunkPoster(url: string, query: string) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const post = (body: string) =>
    new Promise<void>((resolve, reject) => {
      const r = http.request(
        `${url}/stream/${query}`,
        { method: 'POST', agent, headers: { 'content-type': 'application/json' } },
        (res) => {
          res.resume();
          res.on('end', () => resolve());
        },
      );
      r.on('error', reject);
      r.end(body);
    });
  return { post, close: () => agent.destroy() };
}

/**
 * Streams chunks as NDJSON lines of one long `POST /stream/{query}` (chunked transfer encoding), the
 * way the reference's executors write a query's stream: one request per stream, a line per chunk.
 * `post` resolves once the line is handed to the socket; `close` ends the body and waits for the reply.
 */
export function ndjsonPoster(url: string, query: string) {
  let replied!: Promise<void>;
  const r = http.request(`${url}/stream/${query}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-ndjson', 'transfer-encoding': 'chunked' },
  });
  r.setNoDelay(true);
  replied = new Promise<void>((resolve, reject) => {
    r.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve());
    });
    r.on('error', reject);
  });
  replied.catch(() => {});
  r.flushHeaders();
  const post = (line: string) =>
    new Promise<void>((resolve, reject) => r.write(`${line}\n`, (err) => (err ? reject(err) : resolve())));
  return {
    post,
    close: async () => {
      r.end();
      await replied;
    },
  };
}
