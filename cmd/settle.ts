import { releaseStartupGarbage } from '../pkg/http/index.ts';
import type { Logger } from '../pkg/log/index.ts';

/**
 * Once a command has started everything it serves: start-up's garbage is collected and its pages
 * handed back (pkg/http/heap), so an idle pod holds what it uses, not what loading it cost.
 */
export function settleAfterStart(logger: Logger): void {
  // Only an optimisation: whatever goes wrong here must not stop a process that is serving.
  try {
    const { rssBefore, rssAfter, ms } = releaseStartupGarbage();
    const mb = (n: number | undefined) => (n === undefined ? undefined : Math.round(n / 2 ** 20));
    logger.debug({ rssBeforeMb: mb(rssBefore), rssAfterMb: mb(rssAfter), ms }, 'start-up garbage released');
  } catch (err) {
    logger.warn({ err }, 'start-up garbage not released');
  }
}
