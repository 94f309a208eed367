import { IndexedLog, type IndexedLogOptions, type TimedEntry } from './indexed-log.ts';

/**
 * What every in-memory store over an IndexedLog shares: journal load, the head sequence and
 * append listeners (the SSE hubs). Stores with state derived from entries rebuild it in `revived`.
 */
export abstract class LogStore<E extends TimedEntry, K extends string> {
  protected readonly log: IndexedLog<E, K>;
  readonly #listeners: Array<(e: E) => void> = [];

  constructor(opts: IndexedLogOptions<E, K>) {
    const revive = opts.revive;
    this.log = new IndexedLog({
      ...opts,
      revive: (record, json, expiresAt) => {
        const e = revive(record, json, expiresAt);
        this.revived(e);
        return e;
      },
    });
  }

  /** Called for each entry rebuilt from the journal, in journal order (only during `load`). */
  protected revived(_e: E): void {}

  load(): Promise<void> {
    return this.log.load();
  }

  head(): number {
    return this.log.seq;
  }

  onAppend(listener: (e: E) => void): void {
    this.#listeners.push(listener);
  }

  protected emit(e: E): void {
    for (const l of this.#listeners) l(e);
  }
}
