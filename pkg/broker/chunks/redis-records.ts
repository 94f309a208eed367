import { isErrorChunk, type StoredChunk, storedFromJson } from './types.ts';

/** A stream entry as ioredis returns it: id and flat `[field, value, …]`. */
export type RawEntry = [id: string, fields: string[]];

/** Chunks of one script call: their JSON, and one "0"/"1" error flag each. */
export interface Batch {
  json: string[];
  flags: string;
}

// A script call blocks Redis while it runs: at most this many chunks / bytes per call.
const BATCH_BYTES = 1 << 20;

/** Splits chunks into script calls (always at least one: an empty append still opens the stream). */
export function toBatches(chunks: Record<string, unknown>[], maxBatch: number): Batch[] {
  let cur: Batch = { json: [], flags: '' };
  const out = [cur];
  let bytes = 0;
  for (const c of chunks) {
    const json = JSON.stringify(c);
    if (cur.json.length >= maxBatch || (bytes > 0 && bytes + json.length > BATCH_BYTES)) {
      cur = { json: [], flags: '' };
      out.push(cur);
      bytes = 0;
    }
    cur.json.push(json);
    cur.flags += isErrorChunk(c) ? '1' : '0';
    bytes += json.length;
  }
  return out;
}

/**
 * A record from a stream entry. The scripts write the fields in a fixed order — firehose `q, r`,
 * per-query stream `r`, then `e 1` on an error chunk — so they are read by position: the reader
 * decodes every entry of every replica, and this runs once per entry.
 */
export function recordOf([id, f]: RawEntry, query: string | undefined, expiresAt: number): StoredChunk {
  const firehose = f[0] === 'q';
  const json = (firehose ? f[3] : f[1]) ?? '';
  const isError = f.length > (firehose ? 4 : 2);
  return storedFromJson(Number.parseInt(id, 10), query ?? f[1] ?? '', json, isError, expiresAt);
}
