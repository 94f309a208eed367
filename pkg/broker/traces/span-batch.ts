import type { PreparedSpan } from './otlp.ts';

/**
 * The spans of one decoded export in a form that crosses from the decoding thread to the broker's
 * event loop by transfer, not by copy: their stored JSON (all of it but the store's `sequence`) as
 * UTF-8 in one buffer. Returned as twenty strings per export, the structured clone (serialized on
 * the thread, deserialized and then collected on the loop) cost the loop more than storing them;
 * the memory store copies these bytes into its slabs as they are.
 */
export interface SpanBatch {
  /** Each span's JSON after `{"sequence":N,`, back to back. */
  bytes: Uint8Array;
  /** Where each span's JSON ends in `bytes` (it starts where the previous one ends). */
  ends: Uint32Array;
  /** Each span's index into `sessions`, or -1 when it has none. */
  sessionOf: Int32Array;
  /** The trace ids (32 lowercase hex characters each), back to back. */
  traceIds: string;
  /** The distinct session ids of the batch (usually one: an agent's export is one session's). */
  sessions: string[];
}

const TRACE_ID_CHARS = 32;

/** Packs prepared spans (their ids canonical) into one batch. */
export function packSpans(spans: PreparedSpan[]): SpanBatch {
  const batch = new SpanBatchBuilder();
  for (const s of spans) batch.add(s);
  return batch.build();
}

/**
 * Builds a batch from spans whose bytes are already at hand (a range of the export as the client
 * wrote it, then a suffix) and from prepared spans; the bytes are copied once, into the batch.
 */
export class SpanBatchBuilder {
  readonly #parts: Part[] = [];
  readonly #traceIds: string[] = [];
  readonly #sessions: string[] = [];
  readonly #sessionOf: number[] = [];

  /** A span stored as `src[start, end)` followed by `suffix` (shared by spans: not copied here). */
  addRaw(
    traceId: string,
    sessionId: string | undefined,
    src: Uint8Array,
    start: number,
    end: number,
    suffix: Uint8Array,
  ): void {
    this.#parts.push({ src, start, end, suffix });
    this.#add(traceId, sessionId);
  }

  add(span: PreparedSpan): void {
    const tail = Buffer.from(span.tail, 'utf8');
    this.#parts.push({ src: tail, start: 0, end: tail.length, suffix: EMPTY });
    this.#add(span.traceId, span.sessionId);
  }

  build(): SpanBatch {
    const n = this.#parts.length;
    const index = new ArrayBuffer(8 * n);
    const ends = new Uint32Array(index, 0, n);
    let total = 0;
    for (let i = 0; i < n; i++) {
      const p = this.#parts[i] as Part;
      total += p.end - p.start + p.suffix.length;
      ends[i] = total;
    }
    const bytes = new Uint8Array(total);
    let off = 0;
    for (const p of this.#parts) {
      bytes.set(p.src.subarray(p.start, p.end), off);
      off += p.end - p.start;
      bytes.set(p.suffix, off);
      off += p.suffix.length;
    }
    const sessionOf = new Int32Array(index, 4 * n, n);
    sessionOf.set(this.#sessionOf);
    return { bytes, ends, sessionOf, traceIds: this.#traceIds.join(''), sessions: this.#sessions };
  }

  #add(traceId: string, sessionId: string | undefined): void {
    this.#traceIds.push(traceId);
    this.#sessionOf.push(sessionId === undefined ? -1 : sessionIndex(this.#sessions, sessionId));
  }
}

const EMPTY = new Uint8Array(0);

interface Part {
  src: Uint8Array;
  start: number;
  end: number;
  suffix: Uint8Array;
}

function sessionIndex(sessions: string[], id: string): number {
  const at = sessions.lastIndexOf(id);
  if (at >= 0) return at;
  sessions.push(id);
  return sessions.length - 1;
}

/**
 * The buffers to transfer with a batch (unusable on the sending side afterwards); `packSpans` gives
 * the batch buffers of its own.
 */
export function batchTransfer(b: SpanBatch): ArrayBuffer[] {
  const out: ArrayBuffer[] = [];
  for (const buf of [b.bytes.buffer, b.ends.buffer])
    if (buf instanceof ArrayBuffer && !out.includes(buf)) out.push(buf);
  return out;
}

export const batchTraceId = (b: SpanBatch, i: number): string =>
  b.traceIds.slice(i * TRACE_ID_CHARS, (i + 1) * TRACE_ID_CHARS);

/** The span's session id, '' when it has none. */
export const batchSessionId = (b: SpanBatch, i: number): string => {
  const k = b.sessionOf[i] as number;
  return k < 0 ? '' : (b.sessions[k] as string);
};

/** Span `i`'s stored JSON after `{"sequence":N,` (decoded: for tests and readers of a batch). */
export function batchTail(b: SpanBatch, i: number): string {
  const start = i === 0 ? 0 : (b.ends[i - 1] as number);
  return Buffer.from(b.bytes.buffer, b.bytes.byteOffset, b.bytes.byteLength).toString(
    'utf8',
    start,
    b.ends[i] as number,
  );
}
