/**
 * Added latency of a chat completion through Berth: the official `openai` SDK against `/compat/v1`
 * of a real `berth up` process (control plane, broker, controller + engine, API; one process)
 * versus the same SDK calling the fake model directly. The fake model runs in its own process and
 * answers at once over HTTPS. Measured per concurrency (default 20 and 50):
 *   non-streaming  wall time of `chat.completions.create`
 *   streaming      time to the first content chunk (TTFT)
 *   inter-token    gaps between consecutive content chunks of a streamed answer: the model
 *                  (`paced`) streams PACED_WORDS words PACED_GAP_MS apart; added = Berth's gap
 *                  percentile − the direct one (what the relay adds to every token)
 * Added = Berth percentile − direct percentile. Target (issue 7): added p50 ≤ 20 ms, p99 ≤ 60 ms.
 * Usage: node test/bench/chat/run.ts [--requests 400] [--concurrency 20,50] [--target model/default]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import OpenAI from 'openai';
import { Agent, fetch as undiciFetch } from 'undici';
import { API_VERSION, berthScheme } from '../../../pkg/api/index.ts';
import { applyObject } from '../../../pkg/kube/apply.ts';
import { createClient } from '../../../pkg/kube/client/index.ts';
import { projectRoot, startControlPlane } from '../../../pkg/kube/controlplane/index.ts';
import { CoreKinds } from '../../../pkg/kube/kinds.ts';
import { spawnBerth } from '../../support/process.ts';
import { cpuSeconds, pct, platformPids, startFakeModelProcess } from '../support.ts';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '400' },
    concurrency: { type: 'string', default: '20,50' },
    target: { type: 'string', default: 'model/default' },
  },
});
const REQUESTS = Number(values.requests);
const LEVELS = (values.concurrency ?? '20,50').split(',').map(Number);
const TARGET = values.target ?? 'model/default';
const NS = 'bench-chat';
const dir = mkdtempSync(join(tmpdir(), 'berth-bench-chat-'));

/** Runs `n` calls at concurrency `c`; returns the sorted latencies in ms (a call may give several). */
async function run(n: number, c: number, call: (i: number) => Promise<number | number[]>): Promise<number[]> {
  const times: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: c }, async () => {
      while (next < n) times.push(...[await call(next++)].flat());
    }),
  );
  return times.sort((a, b) => a - b);
}

// The paced model: a streamed answer of PACED_WORDS words, PACED_GAP_MS apart.
const PACED_WORDS = 20;
const PACED_GAP_MS = 5;

/** Gaps (ms) between consecutive content chunks of one streamed answer. */
async function interTokenGaps(client: OpenAI, model: string, i: number): Promise<number[]> {
  const stream = await client.chat.completions.create({
    model,
    messages: [{ role: 'user', content: `q${i}` }],
    stream: true,
  });
  const gaps: number[] = [];
  let last = Number.NaN;
  for await (const chunk of stream) {
    if (!chunk.choices[0]?.delta.content) continue;
    const t = performance.now();
    if (!Number.isNaN(last)) gaps.push(t - last);
    last = t;
  }
  if (gaps.length < PACED_WORDS - 2) throw new Error(`stream with ${gaps.length + 1} content chunks`);
  return gaps;
}

async function nonStreaming(client: OpenAI, model: string, i: number): Promise<number> {
  const t = performance.now();
  const res = await client.chat.completions.create({ model, messages: [{ role: 'user', content: `q${i}` }] });
  if (!res.choices[0]?.message.content) throw new Error(`empty answer: ${JSON.stringify(res)}`);
  return performance.now() - t;
}

async function timeToFirstToken(client: OpenAI, model: string, i: number): Promise<number> {
  const t = performance.now();
  const stream = await client.chat.completions.create({
    model,
    messages: [{ role: 'user', content: `q${i}` }],
    stream: true,
  });
  let first = Number.NaN;
  for await (const chunk of stream)
    if (Number.isNaN(first) && chunk.choices[0]?.delta.content) first = performance.now() - t;
  if (Number.isNaN(first)) throw new Error('stream without content');
  return first;
}

/** Where the CPU of the measured Berth requests went: ms per request per process. */
function cpuProfile(pids: Record<string, number>) {
  const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid)]));
  return (requests: number) =>
    Object.entries(pids)
      .map(([k, pid]) => `${k} ${(((cpuSeconds(pid) - (before[k] ?? 0)) * 1000) / requests).toFixed(1)}`)
      .join(', ');
}

const caFile = join(dir, 'ca.pem');
const fake = await startFakeModelProcess(caFile, {
  paced: { reply: 'word '.repeat(PACED_WORDS).trim(), chunkDelayMs: PACED_GAP_MS },
});

const cp = await startControlPlane({ crdDir: join(projectRoot(), 'crds') });
const up = spawnBerth(
  ['up', '--namespace', NS, '--api-port', '0', '--broker-port', '0', '--state-dir', join(dir, 'state')],
  { ...process.env, KUBECONFIG: cp.kubeconfigPath, NODE_EXTRA_CA_CERTS: caFile, LOG_LEVEL: 'warn' },
);
try {
  const kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfigPath);
  const admin = createClient({ kc, scheme: berthScheme() });
  await admin.create(CoreKinds.Namespace, { metadata: { name: NS } });
  // LOG_LEVEL=warn keeps logging out of the measurement; the banner names the API's address.
  const banner = await up.waitForLine(/API service:\s+http/, 120_000);
  const ready = { api: /API service:\s+(\S+)/.exec(banner)?.[1] as string };
  const apply = (kind: string, name: string, spec: Record<string, unknown>) =>
    applyObject(
      admin,
      { apiVersion: API_VERSION, kind, metadata: { name, namespace: NS }, spec },
      {
        fieldManager: 'bench',
        force: true,
      },
    );
  await apply('Model', 'default', { type: 'openai', model: 'bench', baseUrl: fake.url });
  await apply('Agent', 'bench', { prompt: 'You are a benchmark.' });
  await apply('Model', 'paced', { type: 'openai', model: 'paced', baseUrl: fake.url });

  const dispatcher = new Agent({ connect: { ca: fake.ca }, connections: 256, keepAliveTimeout: 30_000 });
  // Both clients use the same fetch and connection pool settings, so only the path differs.
  const common = { apiKey: 'k', maxRetries: 0, fetch: undiciFetch as never, fetchOptions: { dispatcher } };
  const direct = new OpenAI({ baseURL: fake.url, ...common });
  const berth = new OpenAI({ baseURL: `${ready.api}/compat/v1`, ...common });
  // The target must be cached by the API before the first request; wait for it through the API.
  for (const target of [TARGET, 'model/paced'])
    for (let i = 0; !(await berth.models.list()).data.some((m) => m.id === target); i++) {
      if (i > 200) throw new Error(`${target} never appeared in /compat/v1/models`);
      await new Promise((r) => setTimeout(r, 50));
    }

  console.log(
    `chat completion overhead — ${TARGET} via berth up (one process) vs the fake model directly; ` +
      `node ${process.version}, ${cpus().length} cores, load ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}, n=${REQUESTS} per row`,
  );
  const pids = platformPids(cp, up.proc.pid as number, fake.proc.pid as number);
  const f = (n: number) => n.toFixed(1).padStart(6);
  const rows: [
    string,
    (client: OpenAI, model: string, i: number) => Promise<number | number[]>,
    string,
    string,
  ][] = [
    ['non-streaming', nonStreaming, 'bench', TARGET],
    ['ttft streaming', timeToFirstToken, 'bench', TARGET],
    ['inter-token', interTokenGaps, 'paced', 'model/paced'],
  ];
  for (const [label, measure, model, target] of rows) {
    for (const c of LEVELS) {
      // Warm-up at this concurrency: keep-alive connections, JIT, informer steady state.
      await run(Math.max(50, c * 2), c, (i) => measure(direct, model, i));
      await run(Math.max(50, c * 2), c, (i) => measure(berth, target, i));
      const d = await run(REQUESTS, c, (i) => measure(direct, model, i));
      const cpu = cpuProfile(pids);
      const t0 = performance.now();
      const b = await run(REQUESTS, c, (i) => measure(berth, target, i));
      const qps = (REQUESTS / (performance.now() - t0)) * 1000;
      const used = cpu(REQUESTS);
      const row = (p: number) => pct(b, p) - pct(d, p);
      console.log(
        `${label.padEnd(15)} c=${String(c).padEnd(3)} direct p50 ${f(pct(d, 50))} p99 ${f(pct(d, 99))} | berth p50 ${f(pct(b, 50))} p99 ${f(pct(b, 99))} | added p50 ${f(row(50))} p99 ${f(row(99))} ms | berth ${qps.toFixed(0)} req/s`,
      );
      console.log(`${''.padEnd(21)} CPU ms per Berth request: ${used}`);
    }
  }
} finally {
  up.proc.kill('SIGINT');
  await up.exited;
  fake.proc.kill('SIGTERM');
  await cp.stop();
  rmSync(dir, { recursive: true, force: true });
}
