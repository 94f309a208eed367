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
  type Figures = { p50: number; p95: number; max: number };
  const results: Record<string, { inPage: Figures; withDriver: Figures; rounds: number }> = {};
  const figures = (xs: number[]): Figures => ({
    p50: Math.round(pct(xs, 50)),
    p95: Math.round(pct(xs, 95)),
    max: Math.round(Math.max(...xs)),
  });
  for (const path of pages) {
    const inPage: number[] = [];
    const withDriver: number[] = [];
    for (let r = 0; r < ROUNDS + 2; r++) {
      const t0 = performance.now();
      await page.goto(`${dash}${path}`);
      await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
      const total = performance.now() - t0;
      // The page's own clock: navigation start → the `berth-ready` mark (no driver round trips).
      const mark = await page.evaluate(
        () => (globalThis as any).performance.getEntriesByName('berth-ready')[0]?.startTime ?? -1,
      );
      if (r < 2) continue; // two warm-up loads (bundle in the cache, JIT)
      withDriver.push(total);
      inPage.push(mark);
    }
    results[path] = { inPage: figures(inPage), withDriver: figures(withDriver), rounds: inPage.length };
    const f = results[path];
    console.log(
      `${path.padEnd(20)} in page p50 ${f.inPage.p50} ms p95 ${f.inPage.p95} ms max ${f.inPage.max} ms | with the driver p50 ${f.withDriver.p50} ms p95 ${f.withDriver.p95} ms`,
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
