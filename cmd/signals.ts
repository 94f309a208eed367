import type { Logger } from '../pkg/log/index.ts';

export interface StopSignals {
  /**
   * How the command stops, the same for every command (docs/observability.md): the first SIGINT or
   * SIGTERM logs `shutting down` (with `fields`) and runs `stop`, then the process exits 0, or 1 when
   * `stop` failed; a second signal means "now" and exits 1 at once. Signals caught before this call
   * are handled by it.
   */
  stopWith(logger: Logger, stop: () => Promise<void>, fields?: Record<string, unknown>): void;
}

/**
 * Catches SIGINT and SIGTERM from the start of a command, before its servers are up. Node keeps the
 * default action (terminate at once) for a signal nobody listens to, and a command logs that it is
 * listening before it gets to install its shutdown: a signal sent on reading that line could kill
 * the process without its orderly stop (seen in tests on a loaded machine). Signals caught before
 * `stopWith` are handed to it then.
 */
export function catchStopSignals(): StopSignals {
  const early: string[] = [];
  let handler: ((signal: string) => void) | undefined;
  const on = (signal: string) => (handler ? handler(signal) : early.push(signal));
  process.on('SIGINT', () => on('SIGINT'));
  process.on('SIGTERM', () => on('SIGTERM'));
  return {
    stopWith(logger, stop, fields = {}) {
      let stopping = false;
      handler = (signal) => {
        if (stopping) {
          logger.warn({ signal }, 'second signal: exiting without waiting');
          process.exit(1);
        }
        stopping = true;
        logger.info({ signal, ...fields }, 'shutting down');
        stop().then(
          () => process.exit(0),
          (err: unknown) => {
            logger.error({ err }, 'shutdown failed');
            process.exit(1);
          },
        );
      };
      for (const s of early.splice(0)) handler(s);
    },
  };
}

/**
 * What a command has started, stopped the last first. A stop that comes while the command is still
 * starting (a Ctrl-C during `berth up`'s start-up) stops what is up so far, and the start-up halts
 * at its next step instead of starting more against parts being stopped; what that step was starting
 * ends with the process (the control plane's guards stop etcd and kube-apiserver with it).
 */
export class Started {
  readonly #parts: Array<{ name: string; stop: () => Promise<void> }> = [];
  readonly #logger: Logger;
  #stopping = false;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /**
   * One step of the start-up: its result, recorded as the part `name` with how to stop it when `stop`
   * is given. Once the stop has begun it never returns, whether the step succeeded or failed.
   */
  async step<T>(starting: T | Promise<T>, name?: string, stop?: (part: T) => Promise<void>): Promise<T> {
    let part: T;
    try {
      part = await starting;
    } catch (err) {
      if (this.#stopping) return halted();
      throw err;
    }
    if (name && stop) this.#parts.push({ name, stop: () => stop(part) });
    return this.#stopping ? halted() : part;
  }

  /** Stops every part, the last started first; one that fails to stop is logged, the rest still stop. */
  async stop(): Promise<void> {
    this.#stopping = true;
    // Popped one at a time: a part that comes up meanwhile is stopped too.
    for (let p = this.#parts.pop(); p; p = this.#parts.pop()) {
      const { name } = p;
      await p.stop().catch((err: unknown) => this.#logger.error({ err }, `${name} stop failed`));
    }
  }
}

const halted = () => new Promise<never>(() => {});
