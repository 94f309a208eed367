import { type ChunkText, type StoredChunk, storedFromJson } from './types.ts';

/** A stream entry as ioredis returns it: id and flat `[field, value, …]`. */
export type RawEntry = [id: string, fields: string[]];

/** Chunks of one script call: their JSON, and one "0"/"1" error flag each. */
export interface Batch {
  json: string[];
  flags: string;
  /** The chunks' JSON length, summed. */
  bytes: number;
}

// A script call blocks Redis while it runs: at most this many chunks / bytes per call.
export const BATCH_BYTES = 1 << 20;

/** Splits chunks into script calls (always at least one: an empty append still opens the stream). */
export function toBatches(chunks: ChunkText[], maxBatch: number): Batch[] {
  let cur: Batch = { json: [], flags: '', bytes: 0 };
  const out = [cur];
  for (const c of chunks) {
    const json = c.json;
    if (cur.json.length >= maxBatch || (cur.bytes > 0 && cur.bytes + json.length > BATCH_BYTES)) {
      cur = { json: [], flags: '', bytes: 0 };
      out.push(cur);
    }
    cur.json.push(json);
    cur.flags += c.isError ? '1' : '0';
    cur.bytes += json.length;
  }
  return out;
}

const QUERY_AT = ',"query":';
const TIMESTAMP_AT = ',"timestamp":"';

/**
 * The query of a record, from its head `{"sequence":…,"query":<JSON string>,"timestamp":"…`. Inside
 * a JSON string a quote is always escaped, so the first `,"timestamp":"` after the query is the
 * real one; a name without escapes (the usual Kubernetes name) needs no parse.
 */
export function queryOf(json: string): string {
  const from = json.indexOf(QUERY_AT) + QUERY_AT.length;
  const lit = json.slice(from, json.indexOf(TIMESTAMP_AT, from));
  return lit.includes('\\') ? (JSON.parse(lit) as string) : lit.slice(1, -1);
}

/**
 * A record from a stream entry: `[id, ['r', json]]`, or `[id, ['r', json, 'e', '1']]` for an error
 * chunk (fields by position: the reader decodes every entry of every replica, this runs per entry).
 */
export function recordOf([id, f]: RawEntry, query: string | undefined, expiresAt: number): StoredChunk {
  const json = f[1] ?? '';
  return storedFromJson(Number.parseInt(id, 10), query ?? queryOf(json), json, f.length > 2, expiresAt);
}
