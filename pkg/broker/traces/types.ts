import type { TimedEntry } from '../core/indexed-log.ts';
import type { SpanBatch } from './span-batch.ts';

export interface StoredSpan extends TimedEntry {
  traceId: string;
  sessionId: string;
}

/** A span just stored, as append listeners get it: its stored JSON is built if they ask for it. */
export interface AppendedSpan {
  seq: number;
  traceId: string;
  sessionId: string;
  json(): string;
}

export interface TraceItem {
  traceId: string;
  /** Sequence of the trace's latest span: lists order traces by their last change. */
  seq: number;
  spans: StoredSpan[];
}

/** Storage seam of spans grouped into traces; every backend passes `store.contract.ts`. */
export interface TraceStore {
  head(): number;
  /** Stores a decoded export's spans in order; returns their sequences. */
  ingest(batch: SpanBatch): Promise<number[]>;
  /**
   * Traces whose latest span is after `cursor`, in that order (a session keeps traces with a span of
   * it); `desc`: newest first, those whose latest span is before `cursor` (0: from the newest).
   */
  list(
    sessionId: string | undefined,
    cursor: number,
    limit: number,
    order?: 'asc' | 'desc',
  ): Promise<{ items: TraceItem[]; total: number; hasMore: boolean }>;
  trace(traceId: string): Promise<StoredSpan[] | undefined>;
  /** Spans after `cursor` (watch replay), optionally of one trace or one session. */
  spans(
    f: { traceId?: string | undefined; sessionId?: string | undefined },
    cursor: number,
    limit: number,
  ): Promise<StoredSpan[]>;
  inSession(traceId: string, sessionId: string): boolean;
  purge(): Promise<number>;
  onAppend(listener: (s: AppendedSpan) => void): void;
  close(): Promise<void>;
}

export function traceJson(t: TraceItem): string {
  return `{"traceId":"${t.traceId}","sequence":${t.seq},"spans":[${t.spans.map((s) => s.json).join(',')}]}`;
}
