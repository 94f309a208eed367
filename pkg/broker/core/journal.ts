import {
  closeSync,
  createReadStream,
  existsSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readSync,
  renameSync,
  writeSync,
} from 'node:fs';
import type { Logger } from '../../log/index.ts';

export interface JournalOptions {
  path: string;
  logger: Logger;
  /** How often buffered lines are written; kill -9 loses at most this window, never the file. */
  flushMs: number;
}

/**
 * Append-only JSON-lines persistence of one store. Changes are buffered and appended in batches;
 * nothing is rewritten per change. `compact` writes a snapshot to a temp file and renames it over
 * the journal (atomic), so the file on disk is always either the old or the new one. A torn last
 * line left by a crash is cut off at load so later appends start on a clean line.
 */
export class Journal {
  readonly #opts: JournalOptions;
  #fd: number;
  #pending: string[] = [];
  #timer: NodeJS.Timeout | undefined;
  #size = 0;
  #closed = false;

  constructor(opts: JournalOptions) {
    this.#opts = opts;
    this.#fd = openSync(opts.path, 'a+');
    this.#size = fstatSync(this.#fd).size;
    this.#dropTornTail();
  }

  /** Bytes in the journal file (for compaction decisions). */
  get size(): number {
    return this.#size;
  }

  /** Streams every complete line through `onLine`; unparsable lines are skipped and counted. */
  async load(onLine: (value: Record<string, unknown>) => void): Promise<{ lines: number; skipped: number }> {
    let lines = 0;
    let skipped = 0;
    if (!existsSync(this.#opts.path) || this.#size === 0) return { lines, skipped };
    // readline is taken at use: a broker without persistence never loads it (docs/broker.md "Footprint").
    const { createInterface } = process.getBuiltinModule('node:readline');
    const rl = createInterface({
      input: createReadStream(this.#opts.path, { end: this.#size - 1 }),
      crlfDelay: Infinity,
    });
    for await (const line of rl) {
      if (!line) continue;
      try {
        const v = JSON.parse(line) as unknown;
        if (!v || typeof v !== 'object') throw new Error('not an object');
        onLine(v as Record<string, unknown>);
        lines++;
      } catch {
        skipped++;
      }
    }
    if (skipped)
      this.#opts.logger.warn({ path: this.#opts.path, skipped }, 'skipped unreadable journal lines');
    return { lines, skipped };
  }

  append(line: string): void {
    if (this.#closed) return;
    this.#pending.push(line);
    this.#timer ??= setTimeout(() => this.flush(), this.#opts.flushMs);
  }

  flush(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#pending.length === 0 || this.#closed) return;
    const data = `${this.#pending.join('\n')}\n`;
    this.#pending = [];
    try {
      this.#size += writeSync(this.#fd, data);
    } catch (err) {
      this.#opts.logger.error({ err, path: this.#opts.path }, 'journal write failed');
    }
  }

  /** Replaces the journal with `lines` (a snapshot of the live state), atomically. */
  compact(lines: Iterable<string>): void {
    this.flush();
    const tmp = `${this.#opts.path}.tmp`;
    const fd = openSync(tmp, 'w');
    let size = 0;
    let batch: string[] = [];
    const write = () => {
      if (batch.length === 0) return;
      size += writeSync(fd, `${batch.join('\n')}\n`);
      batch = [];
    };
    for (const l of lines) {
      batch.push(l);
      if (batch.length >= 2048) write();
    }
    write();
    fsyncSync(fd);
    closeSync(fd);
    renameSync(tmp, this.#opts.path);
    closeSync(this.#fd);
    this.#fd = openSync(this.#opts.path, 'a+');
    this.#size = size;
  }

  close(): void {
    this.flush();
    if (this.#closed) return;
    this.#closed = true;
    try {
      fsyncSync(this.#fd);
    } catch {
      // nothing more can be done on shutdown
    }
    closeSync(this.#fd);
  }

  #dropTornTail(): void {
    if (this.#size === 0) return;
    const buf = Buffer.alloc(1);
    readSync(this.#fd, buf, 0, 1, this.#size - 1);
    if (buf[0] === 0x0a) return;
    // Find the last newline and cut everything after it (a record half-written by a crash).
    const chunk = Buffer.alloc(Math.min(this.#size, 1 << 20));
    let end = this.#size;
    while (end > 0) {
      const start = Math.max(0, end - chunk.length);
      const n = readSync(this.#fd, chunk, 0, end - start, start);
      const i = chunk.subarray(0, n).lastIndexOf(0x0a);
      if (i >= 0) {
        end = start + i + 1;
        break;
      }
      end = start;
    }
    ftruncateSync(this.#fd, end);
    this.#opts.logger.warn(
      { path: this.#opts.path, dropped: this.#size - end },
      'dropped a torn last journal line',
    );
    this.#size = end;
  }
}
