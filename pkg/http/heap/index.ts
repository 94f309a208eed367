import { memoryUsage } from 'node:process';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type Collect = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

let collect: Collect | undefined;

/**
 * One compacting collection that also hands freed pages back to the system, run once when a
 * process has finished starting.
 *
 * Start-up leaves far more garbage than live data: Node's ESM loader deserialises a package's whole
 * `package.json` for every module it resolves in that package (drizzle-orm's is 179 KB and ~150 of
 * its files load), ~100 MB in the durable broker against ~20 MB alive afterwards. An idle process
 * allocates too little to ever collect it, so those pages stay resident for the life of a pod that
 * may never see a request — per tenant, per replica. A last-resort collection (what V8 does under
 * memory pressure) frees them and releases V8's page pool: the durable broker idles at ~98 MB RSS
 * instead of ~188 MB (docs/broker.md "Footprint"). It pauses the process for tens of milliseconds,
 * before it takes traffic.
 */
export function releaseStartupGarbage(): { rssBefore?: number; rssAfter?: number; ms: number } {
  const rssBefore = rss();
  const t0 = performance.now();
  if (!collect) {
    // `gc` exists only in contexts created after --expose-gc is set; the main context stays as it was.
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as Collect;
  }
  collect({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  return { rssBefore, rssAfter: rss(), ms: Math.round(performance.now() - t0) };
}

/** The resident set size, when the system tells it (without /proc, e.g. in a bare chroot, it does not). */
function rss(): number | undefined {
  try {
    return memoryUsage.rss();
  } catch {
    return undefined;
  }
}
