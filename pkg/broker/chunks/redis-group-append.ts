import type { Batch } from './redis-records.ts';
import { isoTime } from './types.ts';

// Requests per script call: each costs the script a few commands on its own keys besides its chunks.
const MAX_GROUPS = 200;

/** One request's append waiting for its turn's script call. */
export interface Group {
  query: string;
  batch: Batch;
  /** When its script call was made (the records' timestamp), set by the sender. */
  at: number;
  resolve(appended: Appended): void;
  reject(err: unknown): void;
}

/** Where a group's chunks went: the first sequence (the rest follow it) and the call's time. */
export interface Appended {
  first: number;
  at: number;
}

/** Sends groups as one script call (setting each one's `at`); resolves each group's first sequence. */
export type SendGroups = (groups: Group[]) => Promise<number[]>;

/**
 * Gathers the small appends of one event-loop turn into one script call. Under load many POSTs to
 * different queries are parsed in the same turn; one call each meant a socket write each (~44 µs
 * on loopback, where the write also wakes Redis), a script run each and a reply each to read. The
 * call leaves at the end of the turn that queued its first append (`setImmediate`: after the
 * turn's I/O callbacks, before the next wait for I/O), so no append waits for anything but the
 * other appends of that same turn. A call carries at most `maxChunks` chunks and `maxBytes` bytes,
 * as a single request's batches do, and at most MAX_GROUPS requests.
 */
export class GroupAppender {
  readonly #send: SendGroups;
  readonly #maxChunks: number;
  readonly #maxBytes: number;
  #queue: Group[] = [];
  #scheduled = false;

  constructor(send: SendGroups, limits: { maxChunks: number; maxBytes: number }) {
    this.#send = send;
    this.#maxChunks = limits.maxChunks;
    this.#maxBytes = limits.maxBytes;
  }

  /** Queues one request's chunks (one batch); resolves where they were stored. */
  append(query: string, batch: Batch): Promise<Appended> {
    return new Promise<Appended>((resolve, reject) => {
      this.#queue.push({ query, batch, at: 0, resolve, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /**
   * Sends everything queued now, in calls within the limits, in queue order (the commands of one
   * connection run in the order written, so earlier appends get lower sequences).
   */
  flush(): void {
    this.#scheduled = false;
    const queue = this.#queue;
    this.#queue = [];
    let call: Group[] = [];
    let chunks = 0;
    let bytes = 0;
    for (const g of queue) {
      // An empty append still costs the script its stream's state: it counts as one chunk, so a
      // turn of many empty POSTs cannot make one long script that holds Redis for everyone.
      const n = Math.max(1, g.batch.json.length);
      const full =
        call.length >= MAX_GROUPS || chunks + n > this.#maxChunks || bytes + g.batch.bytes > this.#maxBytes;
      if (call.length && full) {
        this.#call(call);
        call = [];
        chunks = 0;
        bytes = 0;
      }
      call.push(g);
      chunks += n;
      bytes += g.batch.bytes;
    }
    if (call.length) this.#call(call);
  }

  #call(groups: Group[]): void {
    this.#send(groups).then(
      (firsts) => {
        for (const [i, g] of groups.entries()) g.resolve({ first: firsts[i] as number, at: g.at });
      },
      (err: unknown) => {
        for (const g of groups) g.reject(err);
      },
    );
  }
}

/**
 * The arguments of one APPEND_MANY_SCRIPT call (redis-scripts.ts), the key count first; stamps
 * each group with the call's time, which is the records' timestamp.
 */
export function appendManyArgs(
  key: (kind: string, query?: string) => string,
  groups: Group[],
  limits: { ttlSeconds: number; max: number; perQuery: number },
): (string | number)[] {
  const now = Date.now();
  const keys = [key('seq'), key('fh'), key('streams')];
  const args: (string | number)[] = [now, limits.ttlSeconds, limits.max, limits.perQuery, isoTime(now)];
  for (const g of groups) {
    g.at = now;
    keys.push(key('q:', g.query), key('st:', g.query));
    args.push(g.query, JSON.stringify(g.query), g.batch.flags, g.batch.json.join('\n'));
  }
  return [keys.length, ...keys, ...args];
}
