/**
 * Dashboard page loads with 1,000 queries (issue 31: < 300 ms on `berth up`). Starts `berth up`
 * with a control plane of its own (a temporary state dir, free ports), makes 1,000 queries on the
 * demo model through the API and waits for them to end, then loads each page in headless Chromium
 * (Debian's, as the browser tests) ROUNDS times: the time from navigation start until the page
 * marks itself ready (body[data-ready=true]: its data fetched and rendered). Prints p50/p95/max per
 * page and writes test/bench/dashboard/results.json. `node test/bench/dashboard/page-loads.ts`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { ROOT, spawnBerth } from '../../support/process.ts';

const QUERIES = Number(process.env.BENCH_QUERIES ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const state = mkdtempSync(join(tmpdir(), 'berth-bench-dash-'));
// Info level: the `ready` line is what this waits for.
const env: NodeJS.ProcessEnv = { ...process.env, AUTH_MODE: 'open', LOG_LEVEL: 'info' };
delete env.KUBECONFIG;
const up = spawnBerth(
  [
    'up',
    '--state-dir',
    state,
    '--api-port',
    '0',
    '--broker-port',
    '0',
    '--dashboard-port',
    '0',
    '--demo-mcp-port',
    '0',
    '--evaluator-port',
    '0',
  ],
  env,
);
const stop = async () => {
  up.proc.kill('SIGINT');
  await up.exited;
  rmSync(state, { recursive: true, force: true });
};

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number;
};

try {
  const ready = JSON.parse(await up.waitForLine(/"msg":"ready"/, 600_000)) as Record<string, string>;
  const api = ready.api as string;
  const dash = ready.dashboard as string;
  const base = `${api}/v1/namespaces/default`;
  const post = (path: string, body: unknown) =>
    fetch(`${base}/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  await post('agents', { name: 'assistant', spec: { prompt: 'You help.', modelRef: { name: 'demo' } } });
  const started = Date.now();
  for (let i = 0; i < QUERIES; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, QUERIES - i) }, (_, j) =>
        post('queries', {
          name: `q-${String(i + j).padStart(4, '0')}`,
          spec: {
            input: `Question number ${i + j}`,
            target: { type: 'agent', name: 'assistant' },
            sessionId: `s-${(i + j) % 100}`,
          },
        }),
      ),
    );
  }
  for (;;) {
    const list = (await (await fetch(`${base}/queries`)).json()) as {
      items: Array<{ status?: { phase?: string } }>;
    };
    const done = list.items.filter((q) =>
      ['done', 'error', 'canceled'].includes(q.status?.phase ?? ''),
    ).length;
    if (done >= QUERIES) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  console.log(`${QUERIES} queries ended in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const pages = [
    '/',
    '/queries',
    '/queries/q-0500',
    '/sessions',
    '/sessions/s-7',
    '/traces',
    '/agents',
    '/agents/assistant',
    '/evaluations',
    '/chat',
  ];
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--headless', '--disable-gpu'],
  });
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  const results: Record<string, { p50: number; p95: number; max: number; rounds: number }> = {};
  for (const path of pages) {
    const times: number[] = [];
    for (let r = 0; r < ROUNDS + 2; r++) {
      const t0 = performance.now();
      await page.goto(`${dash}${path}`);
      await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
      if (r >= 2) times.push(performance.now() - t0); // two warm-up loads (bundle in cache, JIT)
    }
    results[path] = {
      p50: Math.round(pct(times, 50)),
      p95: Math.round(pct(times, 95)),
      max: Math.round(Math.max(...times)),
      rounds: times.length,
    };
    console.log(
      `${path.padEnd(20)} p50 ${results[path].p50} ms  p95 ${results[path].p95} ms  max ${results[path].max} ms`,
    );
  }
  await browser.close();
  const out = {
    benchmark: 'dashboard page loads (navigation start → body[data-ready=true]) on berth up',
    queries: QUERIES,
    rounds: ROUNDS,
    targetMs: 300,
    when: new Date().toISOString(),
    results,
  };
  writeFileSync(
    join(ROOT, 'test', 'bench', 'dashboard', 'results.json'),
    `${JSON.stringify(out, null, 2)}\n`,
  );
} finally {
  await stop();
}
