/**
 * `node test/bench/broker/tiny-pieces.ts` — what one hostile NDJSON upload costs the broker when it
 * sends a long line in tiny chunked-encoding pieces (`BENCH_PIECE_BYTES`, default 9, just over the
 * smallest average the body reader accepts past 10,000 pieces; `BENCH_PIECES`, default 200,000 — a
 * 1.8 MB line), against `berth broker` of each checkout in `BENCH_ROOTS` (`label=/path`, built, default
 * this one). Reports the wall time to the answer and the broker's CPU time for it.
 */
import net from 'node:net';
import { projectRoot } from '../../../pkg/kube/controlplane/index.ts';
import { cpuSeconds } from '../support.ts';
import { startBrokerAt } from './rows/broker.ts';

const pieces = Number(process.env.BENCH_PIECES ?? 200_000);
const pieceBytes = Number(process.env.BENCH_PIECE_BYTES ?? 9);
const roots = (process.env.BENCH_ROOTS ?? `current=${projectRoot()}`).split(',').map((s) => s.split('='));

/** One upload: `{"a":"xxx…"}` with the x's in pieces of `pieceBytes`; resolves with the status line and body. */
async function upload(port: number): Promise<string> {
  const s = net.connect(port, '127.0.0.1');
  await new Promise((r) => s.once('connect', r));
  s.write(
    'POST /stream/tiny HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n',
  );
  s.write('6\r\n{"a":"\r\n');
  const piece = Buffer.from(`${pieceBytes.toString(16)}\r\n${'x'.repeat(pieceBytes)}\r\n`);
  const block = Buffer.concat(Array.from({ length: 1000 }, () => piece));
  let answer = '';
  s.on('data', (d) => {
    answer += d;
  });
  const answered = new Promise<void>((resolve) => {
    const check = () => (/\r\n\r\n[\s\S]*\}$/.test(answer) ? resolve() : undefined);
    s.on('data', check);
    s.on('close', () => resolve());
  });
  for (let i = 0; i < pieces / 1000 && !s.destroyed && !answer; i++)
    if (!s.write(block)) await new Promise((r) => s.once('drain', r));
  if (!answer) s.write('3\r\n"}\n\r\n0\r\n\r\n');
  await answered;
  s.destroy();
  return `${answer.split('\r\n')[0]} ${answer.slice(answer.indexOf('\r\n\r\n') + 4, answer.indexOf('\r\n\r\n') + 124)}`;
}

for (const [label, root] of roots) {
  const b = await startBrokerAt(root as string);
  try {
    const cpu0 = cpuSeconds(b.pid);
    const t0 = performance.now();
    const answer = await upload(Number(new URL(b.url).port));
    const wall = Math.round(performance.now() - t0);
    console.log(
      `${label}: ${pieces} pieces of ${pieceBytes} B: ${wall} ms, broker CPU ${Math.round((cpuSeconds(b.pid) - cpu0) * 1000)} ms — ${answer}`,
    );
  } finally {
    await b.stop();
  }
}
