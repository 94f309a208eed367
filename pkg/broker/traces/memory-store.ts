import { LogStore, type LogStoreOptions, timedEntry } from '../core/log-store.ts';
import { type PreparedSpan, spanJson } from './otlp.ts';
import type { StoredSpan, TraceItem, TraceStore } from './types.ts';

export type MemoryTraceStoreOptions = LogStoreOptions;

function entryOf(r: Record<string, unknown>, json: string, expiresAt: number): StoredSpan {
  return {
    ...timedEntry(r, json, expiresAt, 96),
    traceId: String(r.traceId),
    sessionId: typeof r.sessionId === 'string' ? r.sessionId : '',
  };
}

/** Spans in memory, indexed by trace and by session; a trace is the spans of one trace id. */
export class MemoryTraceStore extends LogStore<StoredSpan, 'trace' | 'session'> implements TraceStore {
  constructor(opts: MemoryTraceStoreOptions) {
    super(opts, { keys: { trace: (e) => e.traceId, session: (e) => e.sessionId }, revive: entryOf });
  }

  async ingest(spans: PreparedSpan[]): Promise<StoredSpan[]> {
    const expiresAt = this.log.now() + this.ttlMs;
    const out = spans.map((s) => {
      const sequence = this.log.nextSeq();
      const e = entryOf(
        { sequence, traceId: s.traceId, sessionId: s.sessionId },
        spanJson(sequence, s),
        expiresAt,
      );
      this.log.append(e);
      return e;
    });
    for (const e of out) this.emit(e);
    return out;
  }

  async list(sessionId: string | undefined, cursor: number, limit: number) {
    if (sessionId !== undefined) {
      const ids = new Set<string>();
      for (const s of this.log.index('session', sessionId)?.values() ?? []) ids.add(s.traceId);
      const all = [...ids].map((id) => this.#item(id)).filter((t): t is TraceItem => !!t);
      const after = all.filter((t) => t.seq > cursor).sort((a, b) => a.seq - b.seq);
      return { items: after.slice(0, limit), total: all.length, hasMore: after.length > limit };
    }
    const items: TraceItem[] = [];
    const d = this.log.log.entries;
    for (const span of d.values(d.indexAfter(cursor))) {
      // A trace is listed at the position of its latest span.
      if (this.log.index('trace', span.traceId)?.last() !== span) continue;
      if (items.length === limit) return { items, total: this.#traceCount(), hasMore: true };
      items.push(this.#item(span.traceId) as TraceItem);
    }
    return { items, total: this.#traceCount(), hasMore: false };
  }

  async trace(traceId: string): Promise<StoredSpan[] | undefined> {
    return this.#item(traceId)?.spans;
  }

  async spans(
    f: { traceId?: string; sessionId?: string },
    cursor: number,
    limit: number,
  ): Promise<StoredSpan[]> {
    if (f.traceId !== undefined) return this.log.page(['trace', f.traceId], cursor, limit).items;
    const out: StoredSpan[] = [];
    const d = this.log.log.entries;
    for (const s of d.values(d.indexAfter(cursor))) {
      if (f.sessionId !== undefined && !this.inSession(s.traceId, f.sessionId)) continue;
      out.push(s);
      if (out.length === limit) break;
    }
    return out;
  }

  inSession(traceId: string, sessionId: string): boolean {
    for (const s of this.log.index('trace', traceId)?.values() ?? [])
      if (s.sessionId === sessionId) return true;
    return false;
  }

  async purge(): Promise<number> {
    return this.log.clear();
  }

  sweep(): void {
    this.log.sweep();
  }

  async close(): Promise<void> {
    this.log.close();
  }

  #traceCount(): number {
    return this.log.indexSize('trace');
  }

  #item(traceId: string): TraceItem | undefined {
    const d = this.log.index('trace', traceId);
    const last = d?.last();
    if (!d || !last) return undefined;
    return { traceId, seq: last.seq, spans: [...d.values()] };
  }
}
