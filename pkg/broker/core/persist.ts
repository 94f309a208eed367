import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../log/index.ts';
import { Journal } from './journal.ts';

export interface PersistOptions {
  dir: string;
  flushMs: number;
  logger: Logger;
}

export function openJournal(opts: PersistOptions | undefined, name: string): Journal | undefined {
  if (!opts) return undefined;
  mkdirSync(opts.dir, { recursive: true });
  return new Journal({ path: join(opts.dir, `${name}.jsonl`), logger: opts.logger, flushMs: opts.flushMs });
}

const MIN_COMPACT_BYTES = 16 * 1024 * 1024;

/**
 * Compacts when the journal has grown to twice the live data (evictions and deletions left dead
 * lines behind): amortized, the cost is proportional to what was written, never per change.
 */
export function maybeCompact(
  journal: Journal | undefined,
  liveBytes: number,
  snapshot: () => Iterable<string>,
): void {
  if (!journal) return;
  if (journal.size > Math.max(MIN_COMPACT_BYTES, 2 * liveBytes)) journal.compact(snapshot());
}

/** The sequence watermark line: keeps sequences from being reused after a purge or a restart. */
export function seqLine(seq: number): string {
  return `{"$seq":${seq}}`;
}
