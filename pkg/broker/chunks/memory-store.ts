import { LogStore, type LogStoreOptions, timedEntry } from '../core/log-store.ts';
import type { Page } from '../core/seq-deque.ts';
import {
  CHUNK_KEY,
  type ChunkStore,
  type ChunkText,
  type CompleteResult,
  isErrorChunk,
  type StoredChunk,
  type StreamState,
  storedChunk,
} from './types.ts';

export interface MemoryChunkStoreOptions extends LogStoreOptions {
  maxStreams: number;
}

/** Rebuilds an entry from a journaled record (the journal keeps the records as served). */
function entryOf(r: Record<string, unknown>, json: string, expiresAt: number): StoredChunk {
  const kind = r.type === 'complete' ? 'complete' : 'chunk';
  return {
    ...timedEntry(r, json, expiresAt, 64),
    query: String(r.query),
    kind,
    chunkAt: kind === 'chunk' ? json.indexOf(CHUNK_KEY) + CHUNK_KEY.length : json.length - 1,
    isError: isErrorChunk(r.chunk),
  };
}

/** Chunks in memory: one firehose log indexed by query, plus each query's stream state. */
export class MemoryChunkStore extends LogStore<StoredChunk, 'query'> implements ChunkStore {
  readonly #streams = new Map<string, StreamState>();
  readonly #purgeListeners: Array<() => void> = [];
  readonly #opts: MemoryChunkStoreOptions;

  constructor(opts: MemoryChunkStoreOptions) {
    super(opts, { keys: { query: (e) => e.query }, revive: entryOf });
    this.#opts = opts;
  }

  async state(query: string): Promise<StreamState | undefined> {
    return this.#streams.get(query);
  }

  async append(query: string, chunks: ChunkText[]): Promise<StoredChunk[]> {
    const st = this.#streams.get(query);
    if (!st || st.completed) this.#open(query);
    const out: StoredChunk[] = [];
    for (const chunk of chunks) out.push(this.#add(query, 'chunk', chunk));
    return out;
  }

  async complete(query: string): Promise<{ result: CompleteResult; marker?: StoredChunk }> {
    const st = this.#streams.get(query);
    if (!st) return { result: 'unknown' };
    if (st.completed) return { result: 'already_completed' };
    return { result: 'completed', marker: this.#add(query, 'complete') };
  }

  async page(query: string | undefined, cursor: number, limit: number): Promise<Page<StoredChunk>> {
    return this.log.page(query === undefined ? undefined : ['query', query], cursor, limit);
  }

  async purge(): Promise<number> {
    this.#streams.clear();
    const n = this.log.clear();
    for (const l of this.#purgeListeners) l();
    return n;
  }

  onPurge(listener: () => void): void {
    this.#purgeListeners.push(listener);
  }

  sweep(): void {
    const cutoff = this.log.now() - this.#opts.ttlSeconds * 1000;
    for (const [q, st] of this.#streams) if (st.lastActivity < cutoff) this.#streams.delete(q);
    this.log.sweep();
  }

  async close(): Promise<void> {
    this.log.close();
  }

  /** A new run: the stream is (re)opened after everything stored so far. */
  #open(query: string): void {
    this.#streams.delete(query);
    this.#streams.set(query, {
      query,
      completed: false,
      runAfter: this.log.seq,
      lastActivity: this.log.now(),
    });
    while (this.#streams.size > this.#opts.maxStreams) {
      const oldest = this.#streams.keys().next().value as string;
      this.#streams.delete(oldest);
      this.log.remove('query', oldest);
    }
  }

  #add(query: string, kind: 'chunk' | 'complete', chunk?: ChunkText): StoredChunk {
    const now = this.log.now();
    const e = storedChunk(
      this.log.nextSeq(),
      query,
      now,
      kind === 'chunk' ? chunk?.json : undefined,
      chunk?.isError ?? false,
      now + this.#opts.ttlSeconds * 1000,
    );
    this.log.append(e);
    this.#track(e);
    this.emit(e);
    return e;
  }

  /** Stream states are derived from the chunks: rebuilt as the journal replays them. */
  protected override revived(e: StoredChunk): void {
    this.#track(e);
  }

  #track(e: StoredChunk): void {
    let st = this.#streams.get(e.query);
    if (!st || (st.completed && e.kind === 'chunk')) {
      this.#streams.delete(e.query);
      st = { query: e.query, completed: false, runAfter: e.seq - 1, lastActivity: this.log.now() };
      this.#streams.set(e.query, st);
    }
    st.lastActivity = this.log.now();
    if (e.kind === 'complete') st.completed = true;
  }
}
