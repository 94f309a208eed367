/**
 * A hostile model (issue 26 item 5): what a Model answering every call with a 2 MB error body costs
 * the process that runs queries. A real `berth up` (broker, controller + engine, API; one process)
 * on a real control plane; the model is an HTTPS server in this process that answers every chat
 * completion with HTTP 500 and a 2 MB JSON error body (`retry-after-ms: 1`, so the SDK's retries —
 * three calls per query — cost no backoff and the figures are the processing, not the waiting).
 * A control Model on the same server answers normally.
 *
 * Measured: the time from a Query's POST until a watch sees it end (error | done), the length of
 * its status.message, and the RSS of the `berth up` process (sampled every 50 ms: before, peak
 * during, and after the hostile queries; and the same for as many ordinary queries run first, the
 * growth any queries cause). A query that has not ended after --query-timeout seconds
 * is counted as stalled and the run goes on.
 * Usage: node test/bench/engine/hostile-model.ts [--queries 20] [--concurrency 4] [--body-mb 2]
 *        [--query-timeout 120] [--label after]
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { API_VERSION } from '../../../pkg/api/index.ts';
import { projectRoot, startControlPlane } from '../../../pkg/kube/controlplane/index.ts';
import { rawRequest, rawStream } from '../../../pkg/kube/raw.ts';
import { generateTestPki } from '../../fixtures/test-ca.ts';
import { spawnBerth } from '../../support/process.ts';
import { pct } from '../support.ts';

const { values } = parseArgs({
  options: {
    queries: { type: 'string', default: '20' },
    concurrency: { type: 'string', default: '4' },
    'body-mb': { type: 'string', default: '2' },
    'query-timeout': { type: 'string', default: '120' },
    label: { type: 'string', default: 'latest' },
  },
});
const TOTAL = Number(values.queries);
const CONCURRENCY = Number(values.concurrency);
const BODY_BYTES = Math.round(Number(values['body-mb']) * 1024 * 1024);
const QUERY_TIMEOUT_MS = Number(values['query-timeout']) * 1000;
const NS = 'bench-hostile';
const GROUP = `/apis/${API_VERSION}/namespaces/${NS}`;
const RESULTS = join(import.meta.dirname, 'hostile-model-results.json');

/** `{"error":{"message":"…"}}` of `bytes` bytes: words, dashes and digits, as a proxy's error page. */
function errorBody(bytes: number): Buffer {
  const unit = 'upstream-failure at 0123456789 retry later; ';
  const text = unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes - 48);
  return Buffer.from(JSON.stringify({ error: { message: text, type: 'server_error' } }));
}

const dir = mkdtempSync(join(tmpdir(), 'berth-bench-hostile-'));
const pki = await generateTestPki();
writeFileSync(join(dir, 'ca.pem'), pki.ca);
const BODY = errorBody(BODY_BYTES);
let hostileCalls = 0;
const model = createServer({ key: pki.key, cert: pki.cert }, (req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (p: Buffer) => parts.push(p));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(parts).toString('utf8') || '{}') as { model?: string };
    if (body.model === 'ok') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'chatcmpl-ok',
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: 'ok',
          choices: [{ index: 0, message: { role: 'assistant', content: 'fine' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
      return;
    }
    hostileCalls++;
    res.on('error', () => {});
    res.writeHead(500, { 'content-type': 'application/json', 'retry-after-ms': '1' }).end(BODY);
  });
});
await new Promise<void>((r) => model.listen(0, '127.0.0.1', r));
const modelUrl = `https://127.0.0.1:${(model.address() as AddressInfo).port}/v1`;

const cp = await startControlPlane({ crdDir: join(projectRoot(), 'crds') });
const admin = new KubeConfig();
admin.loadFromFile(cp.kubeconfigPath);
const kube = async (method: string, path: string, body?: unknown) => {
  const res = await rawRequest(admin, { method, path, body });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.body.slice(0, 300)}`);
  return res;
};
await kube('POST', '/api/v1/namespaces', { metadata: { name: NS } });
const up = spawnBerth(
  ['up', '--namespace', NS, '--api-port', '0', '--broker-port', '0', '--state-dir', join(dir, 'state')],
  {
    ...process.env,
    KUBECONFIG: cp.kubeconfigPath,
    NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem'),
    LOG_LEVEL: 'warn',
  },
);

const rssMb = (pid: number) =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

interface Ended {
  phase: string;
  messageLength: number;
}
const waiting = new Map<string, (e: Ended) => void>();
async function watchQueries(): Promise<() => void> {
  const res = await rawStream(admin, { path: `${GROUP}/queries?watch=1` });
  const lines = createInterface({ input: res, crlfDelay: Number.POSITIVE_INFINITY });
  lines.on('line', (l) => {
    const ev = JSON.parse(l) as {
      object: { metadata: { name: string }; status?: { phase?: string; message?: string } };
    };
    const s = ev.object.status;
    if (s?.phase === 'done' || s?.phase === 'error' || s?.phase === 'canceled')
      waiting.get(ev.object.metadata.name)?.({ phase: s.phase, messageLength: s.message?.length ?? 0 });
  });
  return () => res.destroy();
}

interface Sample {
  ms: number;
  phase: string;
  messageLength: number;
}
async function runOne(name: string, target: string): Promise<Sample> {
  let timer: NodeJS.Timeout | undefined;
  const ended = new Promise<Ended>((resolve) => {
    waiting.set(name, resolve);
    timer = setTimeout(() => resolve({ phase: 'stalled', messageLength: 0 }), QUERY_TIMEOUT_MS);
  });
  const t = performance.now();
  await kube('POST', `${GROUP}/queries`, {
    apiVersion: API_VERSION,
    kind: 'Query',
    metadata: { name },
    spec: { input: `question ${name}`, target: { type: 'model', name: target } },
  });
  const e = await ended;
  clearTimeout(timer);
  waiting.delete(name);
  return { ms: performance.now() - t, ...e };
}

async function measure(label: string, target: string, n: number, c: number) {
  const samples: Sample[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: c }, async () => {
      while (next < n) samples.push(await runOne(`${label}-${next++}`, target));
    }),
  );
  return { samples, wallMs: performance.now() - t0 };
}

let stopWatch = () => {};
let sampler: NodeJS.Timeout | undefined;
try {
  await up.waitForLine(/API service:\s+http/, 120_000);
  const pid = up.proc.pid as number;
  for (const name of ['hostile', 'ok'])
    await kube('POST', `${GROUP}/models`, {
      apiVersion: API_VERSION,
      kind: 'Model',
      metadata: { name },
      spec: { type: 'openai', model: name, baseUrl: modelUrl },
    });
  stopWatch = await watchQueries();
  console.log(
    `hostile model: ${(BODY.length / 1024 / 1024).toFixed(1)} MB error body per call; node ${process.version}, ${cpus().length} cores, load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}; n=${TOTAL}, c=${CONCURRENCY}`,
  );
  await measure('warm', 'ok', 20, 1);
  // The same number of ordinary queries first: what the process grows by anyway (caches, heap).
  let peak = rssMb(pid);
  sampler = setInterval(() => {
    try {
      peak = Math.max(peak, rssMb(pid));
    } catch {
      // the process ended; the run reports it below
    }
  }, 50);
  const rssStart = peak;
  const control = await measure('ok', 'ok', TOTAL, CONCURRENCY);
  const controlPeak = peak;
  const rssBefore = rssMb(pid);
  peak = rssBefore;
  const hostile = await measure('hostile', 'hostile', TOTAL, CONCURRENCY);
  clearInterval(sampler);
  const rssAfter = rssMb(pid);
  const times = hostile.samples.map((s) => s.ms).sort((a, b) => a - b);
  const okTimes = control.samples.map((s) => s.ms).sort((a, b) => a - b);
  const phases: Record<string, number> = {};
  for (const s of hostile.samples) phases[s.phase] = (phases[s.phase] ?? 0) + 1;
  const results = {
    bodyBytes: BODY.length,
    queries: TOTAL,
    concurrency: CONCURRENCY,
    modelCalls: hostileCalls,
    phases,
    queryMs: {
      p50: Math.round(pct(times, 50)),
      p99: Math.round(pct(times, 99)),
      max: Math.round(times.at(-1) ?? 0),
    },
    controlQueryMs: { p50: Math.round(pct(okTimes, 50)), max: Math.round(okTimes.at(-1) ?? 0) },
    statusMessageChars: { max: Math.max(...hostile.samples.map((s) => s.messageLength)) },
    controlRssMb: { before: Math.round(rssStart), peak: Math.round(controlPeak) },
    rssMb: { before: Math.round(rssBefore), peak: Math.round(peak), after: Math.round(rssAfter) },
    wallSeconds: Math.round(hostile.wallMs / 100) / 10,
  };
  console.log(JSON.stringify(results, null, 2));
  // What berth up complained about (distinct messages, each cut short): why queries stall, if they do.
  const complaints = new Map<string, string>();
  for (const line of up.output().split('\n')) {
    const level = /^\{"level":"?(\w+)/.exec(line)?.[1];
    if (level !== 'warn' && level !== 'error' && level !== 'fatal') continue;
    // The message is the last field; a line may hold megabytes before it.
    const msg = /"msg":"([^"]{0,120})"\}?$/.exec(line.slice(-200))?.[1] ?? '?';
    if (!complaints.has(msg)) complaints.set(msg, line.length > 240 ? `${line.slice(0, 240)}…` : line);
  }
  for (const line of [...complaints.values()].slice(0, 8)) console.log(`berth up: ${line}`);
  const all = existsSync(RESULTS)
    ? (JSON.parse(readFileSync(RESULTS, 'utf8')) as Record<string, unknown>)
    : {};
  all[values.label ?? 'latest'] = { at: new Date().toISOString(), results };
  writeFileSync(RESULTS, `${JSON.stringify(all, null, 2)}\n`);
} finally {
  clearInterval(sampler);
  stopWatch();
  up.proc.kill('SIGINT');
  await up.exited;
  model.closeAllConnections();
  model.close();
  await cp.stop();
  rmSync(dir, { recursive: true, force: true });
}
