import { spawnBerth } from '../../support/process.ts';

/** `berth broker` as its own process on a free port, logging at info (the port comes from its log). */
export async function startBrokerProcess(env: NodeJS.ProcessEnv = {}) {
  const proc = spawnBerth(['broker', '--port', '0'], { ...process.env, ...env, LOG_LEVEL: 'info' });
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
