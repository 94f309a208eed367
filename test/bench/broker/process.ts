import http from 'node:http';
import net from 'node:net';
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
 * `chunkPoster` without Node's HTTP client: each chunk one `POST /stream/{query}` written as a
 * pre-built HTTP/1.1 request on one kept-alive socket, its answer framed by `content-length` or
 * chunked (`answerLength`). At 50 writers whose timers fire together, `http.request`'s own work per
 * request (~60 µs of the generator's one thread) delays the generator's reading of the deliveries
 * it is timing by up to a whole burst; this client leaves the broker's share of the latency
 * (docs/broker.md, session (10)).
 * Anything but a 200 fails the run instead of being timed.
 */
export function leanChunkPoster(url: string, query: string) {
  const { hostname, port, host } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  socket.setNoDelay(true);
  socket.setEncoding('latin1');
  const request = `POST /stream/${query} HTTP/1.1\r\nhost: ${host}\r\ncontent-type: application/json\r\ncontent-length: `;
  let text = '';
  let pending: { resolve: () => void; reject: (err: Error) => void } | undefined;
  const fail = (err: Error) => {
    pending?.reject(err);
    pending = undefined;
    socket.destroy();
  };
  socket.on('error', fail);
  // A connection closed under a request fails it rather than leaving the run waiting for an answer.
  socket.on('close', () => fail(new Error(`POST /stream/${query}: connection closed`)));
  socket.on('data', (data: string) => {
    text += data;
    const end = text.indexOf('\r\n\r\n');
    if (end < 0) return;
    const head = text.slice(0, end);
    if (!head.startsWith('HTTP/1.1 200 '))
      return fail(
        new Error(`POST /stream/${query}: unexpected answer ${JSON.stringify(text.slice(0, 200))}`),
      );
    const rest = answerLength(head, text, end + 4);
    if (rest === undefined) return;
    text = text.slice(rest);
    const p = pending;
    pending = undefined;
    p?.resolve();
  });
  const post = (body: string) =>
    new Promise<void>((resolve, reject) => {
      pending = { resolve, reject };
      socket.write(`${request}${Buffer.byteLength(body)}\r\n\r\n${body}`);
    });
  return { post, close: () => socket.destroy() };
}

/**
 * Where the answer whose head ends at `bodyStart` ends in `text` (framed by `content-length` or
 * chunked), or undefined while it has not all arrived.
 */
function answerLength(head: string, text: string, bodyStart: number): number | undefined {
  const length = /\r\ncontent-length: *(\d+)/i.exec(head)?.[1];
  if (length !== undefined)
    return text.length >= bodyStart + Number(length) ? bodyStart + Number(length) : undefined;
  let at = bodyStart;
  for (;;) {
    const line = text.indexOf('\r\n', at);
    if (line < 0) return undefined;
    const size = Number.parseInt(text.slice(at, line), 16);
    if (Number.isNaN(size)) throw new Error(`bad chunk size in ${JSON.stringify(text.slice(0, 200))}`);
    const next = line + 2 + size + 2;
    if (text.length < next) return undefined;
    if (size === 0) return next;
    at = next;
  }
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
