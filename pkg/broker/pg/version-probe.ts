import type pg from 'pg';

/** A domain's version as committed now, and the database's clock (epoch ms). */
export interface Probe {
  version: number;
  at: number;
}

/**
 * SQL of a domain's version: the sum of its sharded counter, which a trigger moves in every
 * statement that changes the domain's table (migration 0004). Only committed increments are
 * visible, so an equal version means no change committed in between, on any replica.
 */
export function versionSql(key: string): string {
  return `(SELECT coalesce(sum(n), 0) FROM berth_counters WHERE key = '${key}')::float8`;
}

/**
 * Reads a domain's version, one round trip shared by every caller waiting at the time. A caller
 * never joins a probe already on the wire (it may have been answered before the caller's own
 * request arrived, and miss a commit acknowledged just before it); it waits for the next one,
 * which starts when the current one is answered. So under load at most one probe is in flight and
 * each answers every request that arrived while the previous one ran.
 */
export class VersionProbe {
  readonly #pool: pg.Pool;
  readonly #sql: string;
  #inflight: Promise<Probe> | undefined;
  #next: Promise<Probe> | undefined;

  constructor(pool: pg.Pool, key: string) {
    this.#pool = pool;
    this.#sql = `SELECT ${versionSql(key)} AS version, (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS at`;
  }

  current(): Promise<Probe> {
    if (!this.#inflight) return this.#start();
    this.#next ??= this.#inflight
      .catch(() => undefined)
      .then(() => {
        this.#next = undefined;
        return this.#start();
      });
    return this.#next;
  }

  #start(): Promise<Probe> {
    const p = this.#pool.query<Probe>(this.#sql).then((r) => {
      const row = r.rows[0];
      if (!row) throw new Error('version probe returned no row');
      return row;
    });
    this.#inflight = p;
    const clear = () => {
      if (this.#inflight === p) this.#inflight = undefined;
    };
    p.then(clear, clear);
    return p;
  }
}
