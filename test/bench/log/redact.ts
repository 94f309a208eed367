/**
 * Log redaction on 1 MB of token-like text: `node test/bench/log/redact.ts` (REDACT_BENCH_LABEL
 * names the run in results.json, so before/after sit side by side; REDACT_DEADLINE_S, default 20).
 *
 * Per shape, two figures: the token patterns alone on the whole 1 MB (`scrubTokens`: what a
 * string costs without the length cap) and `redactString` (what a log record pays: cap, then the
 * patterns). Each measurement runs in a worker thread with a deadline, because the quadratic
 * patterns this replaced take minutes on some shapes: past the deadline the size is halved down
 * until one finishes, and the 1 MB figure is extrapolated from there with the growth measured
 * between the two largest sizes that finished (marked "≈").
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

const MB = 1_000_000;
const DEADLINE_MS = Number(process.env.REDACT_DEADLINE_S ?? 20) * 1000;

const repeatTo = (unit: string, chars: number) => unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars);
const jwt = (i: number) =>
  `eyJhbGciOiJSUzI1NiJ9.${Buffer.from(JSON.stringify({ sub: `user-${i}`, exp: 1e9 + i })).toString('base64url')}.${'s'.repeat(43)}`;

/** Realistic error text: a model's 4xx body quoting headers, URLs and keys, as upstreams echo them. */
function logLike(chars: number): string {
  const parts: string[] = [];
  for (let i = 0, n = 0; n < chars; i++) {
    const p = [
      `request ${i} failed: 401 {"error":{"message":"Incorrect API key provided: sk-proj-${'Ab1'.repeat(12)}${i}",`,
      `"headers":{"authorization":"Bearer ${jwt(i)}","x-request-id":"req_${i}abcdef"}},`,
      `"url":"https://svc:pw${i}secret@models.example/v1/chat?api_key=k${i}xyz&model=gpt-4o"}`,
      ` retrying with ghp_${'a1B2'.repeat(9)} password="hunter${i}" and plain words about the weather\n`,
    ].join(' ');
    parts.push(p);
    n += p.length;
  }
  return parts.join('').slice(0, chars);
}

const base64Words = (chars: number) =>
  Array.from({ length: Math.ceil(chars / 41) }, (_, i) =>
    Buffer.from(`${i * 7919}-${i}`)
      .toString('base64url')
      .padEnd(40, 'Q'),
  )
    .join(' ')
    .slice(0, chars);

/** Token-like text of each pattern's worst shape, and two realistic ones. */
const SHAPES: Record<string, (chars: number) => string> = {
  'error bodies with tokens (realistic)': logLike,
  'base64url words': base64Words,
  'JWTs back to back': (n) => repeatTo(`${jwt(1)} `, n),
  '"a-" repeated': (n) => repeatTo('a-', n),
  '"eyJ" + "a." repeated': (n) => `eyJ${repeatTo('a.', n - 3)}`,
  '"eyJ-" repeated': (n) => repeatTo('eyJ-', n),
  '"Bearer " + long tokens': (n) => repeatTo(`Bearer ${'t0K'.repeat(3000)} `, n),
  '"sk-" repeated': (n) => repeatTo('sk-', n),
  '"password=" repeated': (n) => repeatTo('password=', n),
  '"x://user:" repeated': (n) => repeatTo('x://user:', n),
  'PEM BEGIN without END': (n) => repeatTo('-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj34\n', n),
};

type Fn = 'scrubTokens' | 'redactString';

interface Job {
  shape: string;
  chars: number;
  fn: Fn;
}

async function workerMain(job: Job): Promise<void> {
  const log = (await import('../../../pkg/log/index.ts')) as Record<string, unknown>;
  // Before the change there was no cap: redactString was the patterns alone.
  const f = (log[job.fn] ?? log.redactString) as (s: string) => string;
  const make = SHAPES[job.shape] as (n: number) => string;
  // V8 runs a regular expression's first executions in its interpreter, then compiles it: warm up
  // on a small text of the same shape, or the first (interpreted) run is what gets measured.
  for (let i = 0; i < 3; i++) f(make(2000));
  const text = make(job.chars);
  // getrusage's thread CPU time moves in scheduler ticks (4–10 ms): CPU is the mean of 5 runs at
  // 1 MB, wall time their minimum.
  const most = job.chars >= MB ? 5 : 1;
  let wall = Number.POSITIVE_INFINITY;
  let out = '';
  let runs = 0;
  const c0 = process.threadCpuUsage();
  // A run over a second needs no repeating (and five would not fit the deadline).
  while (runs < most && (runs === 0 || wall < 1000)) {
    const t0 = performance.now();
    out = f(text);
    wall = Math.min(wall, performance.now() - t0);
    runs++;
  }
  const c = process.threadCpuUsage(c0);
  const cpu = (c.user + c.system) / 1000 / runs;
  parentPort?.postMessage({ wall, cpu, outChars: out.length });
}

function measure(job: Job): Promise<{ wall: number; cpu: number; outChars: number } | undefined> {
  return new Promise((resolve, reject) => {
    const w = new Worker(new URL(import.meta.url), { workerData: job });
    const timer = setTimeout(() => void w.terminate().then(() => resolve(undefined)), DEADLINE_MS);
    w.once('message', (m) => {
      clearTimeout(timer);
      void w.terminate().then(() => resolve(m));
    });
    w.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

/** The 1 MB figure, or an extrapolation from the largest size that finished within the deadline. */
async function figure(
  shape: string,
  fn: Fn,
): Promise<{ text: string; ms: number; cpu: number; met: boolean }> {
  const done: Array<{ chars: number; wall: number; cpu: number }> = [];
  for (let chars = MB; chars >= 4000; chars = Math.floor(chars / 4)) {
    const r = await measure({ shape, chars, fn });
    if (r) {
      done.push({ chars, ...r });
      if (chars === MB) break;
      // One size down, for the growth rate.
      const smaller = await measure({ shape, chars: Math.floor(chars / 4), fn });
      if (smaller) done.push({ chars: Math.floor(chars / 4), ...smaller });
      break;
    }
  }
  const [big, small] = done;
  if (!big)
    return {
      text: `> ${DEADLINE_MS / 1000} s even at 4 KB`,
      ms: Number.POSITIVE_INFINITY,
      cpu: Number.NaN,
      met: false,
    };
  if (big.chars === MB)
    return {
      text: `${big.cpu.toFixed(1)} ms CPU (${big.wall.toFixed(1)} ms wall)`,
      ms: big.cpu,
      cpu: big.cpu,
      met: big.cpu <= 50,
    };
  // CPU time, not wall time: the machine is shared, and the growth rate is what is extrapolated.
  const exponent = small
    ? Math.log(big.cpu / Math.max(small.cpu, 0.1)) / Math.log(big.chars / small.chars)
    : 2;
  const est = big.cpu * (MB / big.chars) ** Math.max(1, exponent);
  const pretty = est > 60_000 ? `${(est / 60_000).toFixed(0)} min` : `${(est / 1000).toFixed(1)} s`;
  const kb = (n: number) => `${(n / 1000).toFixed(1)} KB`;
  const measured = [big, small]
    .filter((d) => d !== undefined)
    .map((d) => `${kb(d.chars)}: ${(d.cpu / 1000).toFixed(2)} s CPU`)
    .join(', ');
  return {
    text: `≈ ${pretty} CPU (1 MB not run: over ${DEADLINE_MS / 1000} s; ${measured}; growth ~n^${exponent.toFixed(1)})`,
    ms: est,
    cpu: Number.NaN,
    met: false,
  };
}

async function main(): Promise<void> {
  const label = process.env.REDACT_BENCH_LABEL ?? 'latest';
  const results: Record<string, string | number | boolean> = {};
  let worst = 0;
  for (const shape of Object.keys(SHAPES)) {
    for (const fn of ['scrubTokens', 'redactString'] as const) {
      const r = await figure(shape, fn);
      const key = `${shape}: ${fn === 'scrubTokens' ? 'patterns on all 1 MB' : 'redactString (capped)'}`;
      results[key] = r.text;
      if (fn === 'scrubTokens') worst = Math.max(worst, r.ms);
      console.log(`${key.padEnd(70)} ${r.text}`);
    }
  }
  results['slowest shape, patterns on 1 MB (ms CPU)'] = Number.isFinite(worst)
    ? Math.round(worst * 10) / 10
    : 'n/a';
  results.target = 'every shape <= 50 ms for 1 MB';
  results.met = worst <= 50;
  const file = join(import.meta.dirname, 'results.json');
  const all = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
  all[label] = { at: new Date().toISOString(), results };
  writeFileSync(file, `${JSON.stringify(all, null, 2)}\n`);
  console.log(
    `\nslowest shape: ${results['slowest shape, patterns on 1 MB (ms CPU)']} ms CPU; target met: ${results.met}`,
  );
}

if (isMainThread) await main();
else await workerMain(workerData as Job);
