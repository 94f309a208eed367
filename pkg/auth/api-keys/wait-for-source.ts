import type { SecretSource } from './secret-cache.ts';

/**
 * Resolves true once `check()` holds on the source (re-checked on every change event, or by polling
 * a source without events), false after `timeoutMs`. Used for read-your-writes after create/revoke.
 */
export function waitForSource(
  source: SecretSource,
  check: () => boolean,
  timeoutMs: number,
): Promise<boolean> {
  if (check()) return Promise.resolve(true);
  return new Promise<boolean>((resolve) => {
    let off: (() => void) | undefined;
    const finish = (met: boolean) => {
      clearTimeout(timer);
      clearInterval(poll);
      off?.();
      resolve(met);
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    // Event sources are still polled slowly: a missed event must not cost the whole timeout.
    const poll = setInterval(() => check() && finish(true), source.onChange ? 500 : 25);
    off = source.onChange?.(() => check() && finish(true));
  });
}
