/**
 * Idle footprint of `berth broker` (docs/broker.md, "Footprint"): `node test/bench/broker/footprint.ts`.
 * Measures RSS 3 s after "broker listening" (idle), and 3 s after the first request that needs the
 * broker's auth (GET /messages; with a bearer token under BROKER_AUTH=serviceaccount), for
 * BROKER_AUTH=none and BROKER_AUTH=serviceaccount, alternating the modes for BENCH_RUNS rounds
 * (default 3). Runs the built `dist/` (`npm run build`) if there is one, unless BENCH_FROM_DIST=0;
 * BERTH_NODE_FLAGS adds Node flags. In serviceaccount mode the broker's KUBECONFIG points at a
 * stand-in API server in this process that answers every TokenReview "authenticated" (the broker's
 * work is the same as against a real one: load the client, read the kubeconfig, create a
 * TokenReview). FOOTPRINT_LABEL names the run in footprint-results.json beside this file.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../../pkg/kube/controlplane/index.ts';
import { startBrokerProcess } from './process.ts';

// From dist/ as the image runs it, when it was built; else from source (larger: the TypeScript loader).
if (process.env.BENCH_FROM_DIST === undefined) {
  process.env.BENCH_FROM_DIST = existsSync(join(projectRoot(), 'dist', 'cmd', 'berth.js')) ? '1' : '0';
  if (process.env.BENCH_FROM_DIST === '0')
    console.log(
      '[footprint] no dist/ (npm run build): measuring the source, not comparable with dist/ figures',
    );
}
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const SETTLE_MS = 3000;
const NAMESPACE = 'bench-tenant';

// The stand-in API server: a TokenReview is answered authenticated, for the audiences asked, as a
// service account of the broker's namespace (a reader); anything else is 404.
let reviews = 0;
const api = createServer((req, res) => {
  let body = '';
  req.on('data', (d: Buffer) => {
    body += d.toString();
  });
  req.on('end', () => {
    if (req.method !== 'POST' || !req.url?.startsWith('/apis/authentication.k8s.io/v1/tokenreviews')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"kind":"Status","code":404}');
      return;
    }
    reviews++;
    const review = JSON.parse(body) as { spec: { audiences: string[] } };
    const answer = {
      ...review,
      status: {
        authenticated: true,
        user: { username: `system:serviceaccount:${NAMESPACE}:bench` },
        audiences: review.spec.audiences,
      },
    };
    res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
  });
});
await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
const apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
const dir = mkdtempSync(join(tmpdir(), 'berth-footprint-'));
const kubeconfig = join(dir, 'kubeconfig');
writeFileSync(
  kubeconfig,
  [
    'apiVersion: v1',
    'kind: Config',
    // client-node refuses http:// unless TLS verification is off (there is no TLS to verify).
    `clusters: [{name: bench, cluster: {server: "${apiUrl}", insecure-skip-tls-verify: true}}]`,
    'users: [{name: bench, user: {token: bench-broker-identity}}]',
    'contexts: [{name: bench, context: {cluster: bench, user: bench}}]',
    'current-context: bench',
    '',
  ].join('\n'),
);

const modes = {
  none: { BROKER_AUTH: 'none' },
  serviceaccount: { BROKER_AUTH: 'serviceaccount', NAMESPACE, KUBECONFIG: kubeconfig },
} as const;
type Mode = keyof typeof modes;

const rssOf = (pid: number) =>
  Math.round(Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function measure(mode: Mode): Promise<{ idle: number; afterFirst: number }> {
  const broker = await startBrokerProcess({
    ...modes[mode],
    BERTH_NODE_FLAGS: process.env.BERTH_NODE_FLAGS ?? '',
  });
  const pid = broker.proc.pid as number;
  try {
    await sleep(SETTLE_MS);
    const idle = rssOf(pid);
    const before = reviews;
    const res = await fetch(`${broker.url}/messages`, {
      headers: mode === 'serviceaccount' ? { authorization: 'Bearer bench-caller-token' } : {},
    });
    await res.arrayBuffer();
    if (res.status !== 200)
      throw new Error(`${mode}: GET /messages answered ${res.status}\n${broker.output().slice(-2000)}`);
    if (mode === 'serviceaccount' && reviews !== before + 1)
      throw new Error(`${mode}: expected one TokenReview, the stand-in API server saw ${reviews - before}`);
    await sleep(SETTLE_MS);
    return { idle, afterFirst: rssOf(pid) };
  } finally {
    broker.proc.kill('SIGTERM');
    await broker.exited;
  }
}

const samples: Record<Mode, { idle: number[]; afterFirst: number[] }> = {
  none: { idle: [], afterFirst: [] },
  serviceaccount: { idle: [], afterFirst: [] },
};
try {
  for (let i = 0; i < RUNS; i++) {
    for (const mode of Object.keys(modes) as Mode[]) {
      const m = await measure(mode);
      samples[mode].idle.push(m.idle);
      samples[mode].afterFirst.push(m.afterFirst);
      console.log(
        `[footprint] run ${i + 1} ${mode}: idle ${m.idle} MB, after first request ${m.afterFirst} MB`,
      );
    }
  }
} finally {
  api.close();
  rmSync(dir, { recursive: true, force: true });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const results = Object.fromEntries(
  (Object.keys(samples) as Mode[]).map((mode) => [
    `BROKER_AUTH=${mode}`,
    {
      'RSS idle (MB), median': median(samples[mode].idle),
      'RSS idle (MB), runs': samples[mode].idle,
      'RSS after first request (MB), median': median(samples[mode].afterFirst),
      'RSS after first request (MB), runs': samples[mode].afterFirst,
    },
  ]),
);
const label = process.env.FOOTPRINT_LABEL ?? 'current';
const file = join(import.meta.dirname, 'footprint-results.json');
const all = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
all[label] = {
  at: new Date().toISOString(),
  fromDist: process.env.BENCH_FROM_DIST === '1',
  flags: process.env.BERTH_NODE_FLAGS ?? '',
  results,
};
writeFileSync(file, `${JSON.stringify(all, null, 2)}\n`);
console.log(label, JSON.stringify(results, null, 2));
