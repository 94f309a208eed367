import { setFlagsFromString } from 'node:v8';

/** Calls of a function before V8 optimises it with TurboFan (V8's default: 3,000). */
export const TURBOFAN_AFTER_CALLS = 1000;

/**
 * Lets V8 optimise a server's hot path sooner than its default. A fresh broker under streaming load
 * runs its per-request functions in the baseline and mid tiers for its first seconds, and the
 * chunks of that time carry the cost: delivery p99 at 50 streams × 50 chunks/s was 12–24 ms on a
 * fresh process and 2.5–4 ms on one that had run the load for 5 s; with TurboFan after 1,000 calls
 * instead of 3,000 a fresh process measured 6–8.5 ms (docs/broker.md). Set at start, before the
 * server's code first runs; a value given on the command line wins. Only the threshold moves:
 * what is optimised, and how, stays V8's decision.
 */
export function optimiseHotPathsSooner(execArgv: readonly string[] = process.execArgv): boolean {
  if (execArgv.some((a) => /^--invocation[-_]count[-_]for[-_]turbofan\b/.test(a))) return false;
  setFlagsFromString(`--invocation-count-for-turbofan=${TURBOFAN_AFTER_CALLS}`);
  return true;
}
