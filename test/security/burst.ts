import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

/** CPU time (user + system, seconds) a process has used so far, from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) in parentheses: state is the first.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return (utime + stime) / TICKS_PER_SECOND;
}

export interface Answer {
  status: number;
  ms: number;
  retryAfter: string | null;
  message: string;
}

/** One timed GET; the body's error message kept. */
export async function timedGet(url: string, headers: Record<string, string>): Promise<Answer> {
  const t0 = performance.now();
  const res = await fetch(url, { headers });
  const text = await res.text();
  let message = '';
  try {
    message = JSON.parse(text)?.error?.message ?? '';
  } catch {
    // not JSON: no message
  }
  return {
    status: res.status,
    ms: performance.now() - t0,
    retryAfter: res.headers.get('retry-after'),
    message,
  };
}

/** `workers` clients each sending `each` requests made by `next`, one after another. */
export async function hammer(workers: number, each: number, next: () => Promise<Answer>): Promise<Answer[]> {
  const all: Answer[] = [];
  await Promise.all(
    Array.from({ length: workers }, async () => {
      for (let i = 0; i < each; i++) all.push(await next());
    }),
  );
  return all;
}

/** Latencies of requests sent one after another until `until` settles. */
export async function probeWhile(until: Promise<unknown>, send: () => Promise<Answer>): Promise<Answer[]> {
  let done = false;
  void until.finally(() => {
    done = true;
  });
  const seen: Answer[] = [];
  while (!done) {
    seen.push(await send());
    await new Promise((r) => setTimeout(r, 20));
  }
  return seen;
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}
