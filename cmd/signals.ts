/**
 * Catches SIGINT and SIGTERM from the start of a command, before its servers are up. Node keeps the
 * default action (terminate at once) for a signal nobody listens to, and a command logs that it is
 * listening before it gets to install its shutdown: a signal sent on reading that line could kill
 * the process without its orderly stop (seen in tests on a loaded machine). Signals caught before
 * `handle` are handed to it then.
 */
export function catchStopSignals(): { handle(stop: (signal: string) => void): void } {
  const early: string[] = [];
  let handler: ((signal: string) => void) | undefined;
  const on = (signal: string) => (handler ? handler(signal) : early.push(signal));
  process.on('SIGINT', () => on('SIGINT'));
  process.on('SIGTERM', () => on('SIGTERM'));
  return {
    handle(stop) {
      handler = stop;
      for (const s of early.splice(0)) stop(s);
    },
  };
}
