import type { TimedEntry } from '../core/indexed-log.ts';
import type { Page } from '../core/seq-deque.ts';

/** A firehose record: a chunk of a query, or the marker that its stream completed. */
export interface StoredChunk extends TimedEntry {
  query: string;
  kind: 'chunk' | 'complete';
  /** Offset of the chunk's own JSON inside `json` (the per-query stream sends the bare chunk). */
  chunkAt: number;
  isError: boolean;
}

export interface StreamState {
  query: string;
  completed: boolean;
  /** Sequence before the first record of the current run (a POST after completion starts a new run). */
  runAfter: number;
  lastActivity: number;
}

export type CompleteResult = 'completed' | 'already_completed' | 'unknown';

/** Storage seam of streaming chunks; every backend passes `store.contract.ts`. */
export interface ChunkStore {
  head(): number;
  /** Opens (or re-opens after completion) the stream of a query and stores chunks in order. */
  append(query: string, chunks: Record<string, unknown>[]): Promise<StoredChunk[]>;
  complete(query: string): Promise<{ result: CompleteResult; marker?: StoredChunk }>;
  state(query: string): StreamState | undefined;
  page(query: string | undefined, cursor: number, limit: number): Promise<Page<StoredChunk>>;
  purge(): Promise<number>;
  onAppend(listener: (c: StoredChunk) => void): void;
  close(): Promise<void>;
}

export function chunkJson(c: StoredChunk): string {
  return c.json.slice(c.chunkAt, -1);
}
