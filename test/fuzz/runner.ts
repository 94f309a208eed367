/**
 * Runs generated requests against a real service and checks what every answer must satisfy:
 * never a 5xx (no dependency is down during a fuzz run), never a stack trace, and every 4xx says
 * what is wrong. Cases run in concurrent batches; most go through the app's own `fetch` in
 * process (the same routing, middleware and dependencies as on the wire, without a socket's cost),
 * every `socketEvery`-th one over the real listening server.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import type { FuzzRequest } from './openapi.ts';

export interface FuzzTarget {
  /** Base URL of the listening server. */
  url: string;
  /** The app's fetch (Hono `app.fetch`). */
  fetch: (req: Request) => Response | Promise<Response>;
}

export interface Outcome {
  req: FuzzRequest;
  status: number;
  text: string;
  contentType: string;
}

export interface FuzzStats {
  cases: number;
  ms: number;
  byStatus: Record<number, number>;
  byOperation: Record<string, number>;
  /** Operations that never answered 2xx: generation never got past their validation. */
  neverOk: string[];
  /** Bad answers described (FUZZ_KEEP_GOING: the run counts them all instead of stopping at the first batch). */
  bad: string[];
}

/**
 * FUZZ_KEEP_GOING=1 runs every case and fails at the end with all the bad answers: how often a
 * rare failure occurs (a race) is then measured, not just its first occurrence.
 */
export const keepGoing = () => process.env.FUZZ_KEEP_GOING === '1';

/** Generated cases per run: FUZZ_CASES (`make test-faults` raises it), else 10,000. */
export const fuzzCases = () => Number(process.env.FUZZ_CASES ?? 10_000);

/** A test timeout that grows with the case count (the machine has 2 cores, shared). */
export const fuzzTimeout = (cases = fuzzCases()) => 120_000 + cases * 5;

const CASE_TIMEOUT_MS = 15_000;
const STACK = /\n\s+at \S|\bat .+\((?:file|node):|node_modules\/|\.ts:\d+:\d+/;

async function send(target: FuzzTarget, req: FuzzRequest, socket: boolean): Promise<Outcome | undefined> {
  // A timer cleared once the case is answered, not AbortSignal.timeout(): its timer and signal
  // would live on for CASE_TIMEOUT_MS after every case, and the heap checks would count the
  // generator's own leftovers (tens of MB over 100,000 cases) as the service's growth.
  const deadline = new AbortController();
  const timer = setTimeout(
    () => deadline.abort(new Error(`no answer within ${CASE_TIMEOUT_MS} ms`)),
    CASE_TIMEOUT_MS,
  );
  try {
    return await answer(target, req, socket, deadline.signal);
  } finally {
    clearTimeout(timer);
  }
}

async function answer(
  target: FuzzTarget,
  req: FuzzRequest,
  socket: boolean,
  signal: AbortSignal,
): Promise<Outcome | undefined> {
  const init: RequestInit = {
    method: req.method,
    headers: req.headers,
    ...(req.body === undefined ? {} : { body: req.body }),
    signal,
  };
  let request: Request;
  try {
    request = new Request(`${socket ? target.url : 'http://fuzz.local'}${req.url}`, init);
  } catch {
    // A request the client itself refuses to build never reaches the service: not a case.
    return undefined;
  }
  let res: Response;
  try {
    res = socket ? await fetch(request) : await target.fetch(request);
  } catch (err) {
    throw new Error(`${req.method} ${req.url}: no answer (${(err as Error).message})`);
  }
  const contentType = res.headers.get('content-type') ?? '';
  // A stream (SSE watch) is not read to its end: its status and first bytes say enough.
  if (contentType.startsWith('text/event-stream')) {
    await res.body?.cancel().catch(() => {});
    return { req, status: res.status, text: '', contentType };
  }
  return { req, status: res.status, text: await res.text(), contentType };
}

/**
 * Requests that may be answered with a stream: SSE is written straight to the Node socket
 * (pkg/http/sse), so these always go over the wire.
 */
const streams = (r: FuzzRequest) =>
  r.method === 'GET' ? /[?&]watch=|\/stream\//.test(r.url) : /"stream"\s*:\s*true/.test(r.body ?? '');

/** What is wrong with one answer, or undefined when it is fine. */
export function verdict(o: Outcome): string | undefined {
  if (o.status >= 500) return `answered ${o.status}`;
  if (STACK.test(o.text)) return 'a stack trace in the response';
  if (o.status >= 400 && o.status !== 499 && o.contentType.includes('json')) {
    let body: any;
    try {
      body = JSON.parse(o.text);
    } catch {
      return `${o.status} with a body that is not JSON`;
    }
    const message = body?.error?.message ?? body?.message;
    if (typeof message !== 'string' || !message.trim())
      return `${o.status} without a message saying what is wrong`;
  }
  return undefined;
}

function describe(o: Outcome, why: string, errorLog: string[]): string {
  const size = o.req.body?.length ?? 0;
  const body = `${(o.req.body ?? '').slice(0, 200)}${size > 200 ? `…(${size} chars)` : ''}`;
  const id = /"requestId":"([^"]+)"/.exec(o.text)?.[1];
  const logged = id
    ? errorLog.filter((l) => l.includes(id)).map((l) => `\n  logged: ${l.slice(0, 1500)}`)
    : [];
  return (
    `${why}: ${o.req.method} ${o.req.url.slice(0, 200)} (from ${o.req.op}) ${JSON.stringify(o.req.headers)} ` +
    `body=${body} → ${o.status} ${o.text.slice(0, 300)}${logged.join('')}`
  );
}

/**
 * fast-check drives the run: each property run is one batch of `batch` requests sent at once;
 * a failing batch reports every bad answer in it (and the seed that reproduces the run).
 */
export async function fuzz(
  target: FuzzTarget,
  arb: fc.Arbitrary<FuzzRequest>,
  opts: {
    cases: number;
    batch?: number;
    socketEvery?: number;
    /** The service's error log lines, quoted in a failure next to the request they belong to. */
    errorLog?: () => string[];
    onOutcome?: (o: Outcome) => void;
    keepGoing?: boolean;
    /** The run's seed (default FUZZ_SEED, else random). */
    seed?: number;
  },
): Promise<FuzzStats> {
  const batch = opts.batch ?? 48;
  const socketEvery = opts.socketEvery ?? 10;
  const stats: FuzzStats = { cases: 0, ms: 0, byStatus: {}, byOperation: {}, neverOk: [], bad: [] };
  const keep = opts.keepGoing ?? keepGoing();
  const ok = new Set<string>();
  const start = performance.now();
  const seed = opts.seed ?? Number(process.env.FUZZ_SEED ?? Date.now() ^ (Math.random() * 2 ** 31));
  const run = fc.assert(
    fc.asyncProperty(fc.array(arb, { minLength: batch, maxLength: batch }), async (reqs) => {
      const outcomes = await Promise.all(
        reqs.map((r, i) => send(target, r, streams(r) || (stats.cases + i) % socketEvery === 0)),
      );
      const bad: string[] = [];
      for (const o of outcomes) {
        if (!o) continue;
        stats.cases++;
        stats.byStatus[o.status] = (stats.byStatus[o.status] ?? 0) + 1;
        stats.byOperation[o.req.op] = (stats.byOperation[o.req.op] ?? 0) + 1;
        if (o.status >= 200 && o.status < 300) ok.add(o.req.op);
        opts.onOutcome?.(o);
        const why = verdict(o);
        if (why) bad.push(describe(o, why, opts.errorLog?.() ?? []));
      }
      stats.bad.push(...bad);
      if (bad.length && !keep) throw new Error(`${bad.length} bad answer(s):\n${bad.join('\n')}`);
    }),
    { numRuns: Math.ceil(opts.cases / batch), endOnFailure: true, seed },
  );
  try {
    await run;
  } catch (err) {
    // fast-check's own report prints the whole batch (deep bodies included): say only what failed.
    const cause = (err as Error).cause as Error | undefined;
    const detail =
      cause && !cause.message.includes('bad answer')
        ? (cause.stack ?? cause.message)
        : (cause?.message ?? (err as Error).message);
    throw new Error(`${detail}\n(FUZZ_SEED=${seed} replays this run)`);
  }
  stats.ms = Math.round(performance.now() - start);
  stats.neverOk = Object.keys(stats.byOperation).filter((op) => !ok.has(op));
  if (stats.bad.length)
    throw Object.assign(
      new Error(
        `${stats.bad.length} bad answer(s) in ${stats.cases} cases:\n${stats.bad.join('\n')}\n(FUZZ_SEED=${seed} replays this run)`,
      ),
      { stats },
    );
  return stats;
}

let gcFn: (() => void) | undefined;
/**
 * Bytes of live heap after full collections. Between them the event loop turns: FinalizationRegistry
 * callbacks run as tasks, and until they do, what they hold stays reachable — undici keeps the
 * signal of every `new Request(…, {signal})` in its registry's holdings until that callback, so
 * back-to-back collections counted ~20,000 generated requests' signals as the service's growth.
 */
export async function liveHeap(): Promise<number> {
  if (!gcFn) {
    setFlagsFromString('--expose-gc');
    gcFn = runInNewContext('gc') as () => void;
  }
  for (let i = 0; i < 3; i++) {
    gcFn();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  gcFn();
  return process.memoryUsage().heapUsed;
}
