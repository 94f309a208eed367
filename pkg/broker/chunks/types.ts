import { entryBytes } from '../core/capped-log.ts';
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

/**
 * A chunk as it is stored: its JSON text (one line: what was received when that is a single line,
 * so nothing is serialised again) and whether it is an error chunk (which ends its stream).
 */
export interface ChunkText {
  json: string;
  isError: boolean;
}

/**
 * A parsed chunk as stored. `text` — the JSON it was parsed from — is kept as it came when it holds
 * no line break: a record is served inside one SSE `data:` line, where CR or LF would end it early.
 */
export function chunkText(chunk: Record<string, unknown>, text?: string): ChunkText {
  const json = text !== undefined && !/[\r\n]/.test(text) ? text : JSON.stringify(chunk);
  return { json, isError: isErrorChunk(chunk) };
}

/**
 * Storage seam of streaming chunks; every backend passes `store.contract.ts`.
 * `state` is asynchronous because a durable backend must ask the shared store (another replica may
 * have opened or completed the stream); `head` stays synchronous: it is this process's watermark of
 * what its listeners have seen, the start point of a live-only watch.
 */
export interface ChunkStore {
  head(): number;
  /** Durable backends: the committed position of the shared store (see core/watch-route `watchHead`). */
  committedHead?(): Promise<number>;
  /** Opens (or re-opens after completion) the stream of a query and stores chunks in order. */
  append(query: string, chunks: ChunkText[]): Promise<StoredChunk[]>;
  complete(query: string): Promise<{ result: CompleteResult; marker?: StoredChunk }>;
  state(query: string): Promise<StreamState | undefined>;
  page(query: string | undefined, cursor: number, limit: number): Promise<Page<StoredChunk>>;
  purge(): Promise<number>;
  /** Every record stored (by this process or, for a shared backend, by any replica), in sequence order. */
  onAppend(listener: (c: StoredChunk) => void): void;
  /** Called after every purge — by this process or, for a shared backend, by any replica. */
  onPurge(listener: () => void): void;
  close(): Promise<void>;
}

export function chunkJson(c: StoredChunk): string {
  return c.json.slice(c.chunkAt, -1);
}

export const CHUNK_KEY = ',"chunk":';
const CHUNK_TYPE = ',"type":"chunk"';

/** An error chunk ends the stream ([DONE] follows it). */
export function isErrorChunk(chunk: unknown): boolean {
  return !!chunk && typeof chunk === 'object' && 'error' in chunk;
}

let isoAt = Number.NaN;
let iso = '';
/** ISO time of a millisecond; records of a batch share it, so one Date per millisecond is built. */
export function isoTime(at: number): string {
  if (at !== isoAt) {
    isoAt = at;
    iso = new Date(at).toISOString();
  }
  return iso;
}

/**
 * A record from its parts (`chunk` = the chunk's JSON, absent for the completion marker). Every
 * backend builds its records here, so the bytes served are the same whatever stored them.
 */
export function storedChunk(
  seq: number,
  query: string,
  at: number,
  chunk: string | undefined,
  isError: boolean,
  expiresAt: number,
  /** Estimate the heap cost from the length only (a store that does not cap by bytes). */
  roughBytes = false,
): StoredChunk {
  const head = `{"sequence":${seq},"query":${JSON.stringify(query)},"timestamp":"${isoTime(at)}"`;
  const json =
    chunk === undefined ? `${head},"type":"complete"}` : `${head}${CHUNK_TYPE}${CHUNK_KEY}${chunk}}`;
  return {
    seq,
    json,
    bytes: roughBytes ? json.length * 2 + 224 : entryBytes(json, 64),
    expiresAt,
    query,
    kind: chunk === undefined ? 'complete' : 'chunk',
    chunkAt: chunk === undefined ? json.length - 1 : head.length + CHUNK_TYPE.length + CHUNK_KEY.length,
    isError,
  };
}

const COMPLETE_TAIL = ',"type":"complete"}';

/** A record from the JSON a backend stored as served (for a backend that builds it elsewhere). */
export function storedFromJson(
  seq: number,
  query: string,
  json: string,
  isError: boolean,
  expiresAt: number,
): StoredChunk {
  const complete = json.endsWith(COMPLETE_TAIL);
  return {
    seq,
    json,
    // An upper bound without scanning the text: nothing caps these records by bytes in the process.
    bytes: json.length * 2 + 224,
    expiresAt,
    query,
    kind: complete ? 'complete' : 'chunk',
    // The query is JSON-escaped in the head, so the first `,"chunk":` is the chunk's own key.
    chunkAt: complete ? json.length - 1 : json.indexOf(CHUNK_KEY) + CHUNK_KEY.length,
    isError,
  };
}
