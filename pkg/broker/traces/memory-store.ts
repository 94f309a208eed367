import { ENTRY_OVERHEAD, type StoreStats } from '../core/capped-log.ts';
import { LogStore, type LogStoreOptions } from '../core/log-store.ts';
import { PackedEntry, viewsOf } from '../core/packed-entry.ts';
import { TextSlabs } from '../core/text-slabs.ts';
import { batchSessionId, batchTail, batchTraceId, type SpanBatch } from './span-batch.ts';
import type { AppendedSpan, StoredSpan, TraceItem, TraceStore } from './types.ts';

export type MemoryTraceStoreOptions = LogStoreOptions;

const SPAN_OVERHEAD = ENTRY_OVERHEAD + 96;

/** A span as the store holds it: its JSON in a slab (see `PackedEntry`). */
class PackedSpan extends PackedEntry<StoredSpan> implements StoredSpan {
  readonly traceId: string;
  readonly sessionId: string;

  constructor(seq: number, traceId: string, sessionId: string, expiresAt: number) {
    super(seq, expiresAt);
    this.traceId = traceId;
    this.sessionId = sessionId;
  }

  protected overhead(): number {
    return SPAN_OVERHEAD;
  }

  view(json = this.json): StoredSpan {
    const { seq, traceId, sessionId, expiresAt, bytes } = this;
    return { seq, json, bytes, traceId, sessionId, expiresAt };
  }
}

const spanPrefix = (seq: number) => `{"sequence":${seq},`;

/** A span just stored, for the append listeners: its JSON is decoded only if one asks for it. */
class BatchSpan implements AppendedSpan {
  readonly seq: number;
  readonly traceId: string;
  readonly sessionId: string;
  readonly #batch: SpanBatch;
  readonly #index: number;

  constructor(batch: SpanBatch, index: number, e: PackedSpan) {
    this.seq = e.seq;
    this.traceId = e.traceId;
    this.sessionId = e.sessionId;
    this.#batch = batch;
    this.#index = index;
  }

  json(): string {
    return spanPrefix(this.seq) + batchTail(this.#batch, this.#index);
  }
}

/**
 * Spans in memory, indexed by trace and by session; a trace is the spans of one trace id. Their
 * JSON lives off the V8 heap (`TextSlabs`): with strings, a store at its 128 MB cap made a broker
 * of 800+ MB after a burst of exports. Readers get views, never the stored entries.
 */
export class MemoryTraceStore
  extends LogStore<PackedSpan, 'trace' | 'session', AppendedSpan>
  implements TraceStore
{
  readonly #slabs: TextSlabs;

  constructor(opts: MemoryTraceStoreOptions) {
    const slabs = new TextSlabs();
    super(opts, {
      keys: { trace: (e) => e.traceId, session: (e) => e.sessionId },
      revive: (r, json, expiresAt) => {
        const sessionId = typeof r.sessionId === 'string' ? r.sessionId : '';
        const e = new PackedSpan(r.sequence as number, String(r.traceId), sessionId, expiresAt);
        slabs.put(json, e);
        return e;
      },
      onEvict: (e) => slabs.release(e),
      onRemove: (gone) => {
        for (const e of gone) slabs.release(e);
        slabs.compact(() => this.log.log.entries.values());
      },
    });
    this.#slabs = slabs;
  }

  async ingest(batch: SpanBatch): Promise<number[]> {
    const expiresAt = this.log.now() + this.ttlMs;
    const seqs: number[] = [];
    let start = 0;
    for (let i = 0; i < batch.ends.length; i++) {
      const end = batch.ends[i] as number;
      const seq = this.log.nextSeq();
      const e = new PackedSpan(seq, batchTraceId(batch, i), batchSessionId(batch, i), expiresAt);
      this.#slabs.putJoined(spanPrefix(seq), batch.bytes, start, end, e);
      this.log.append(e);
      // From the batch, not the slab: the span may already be evicted (a batch past the cap).
      this.emit(new BatchSpan(batch, i, e));
      seqs.push(seq);
      start = end;
    }
    return seqs;
  }

  async list(sessionId: string | undefined, cursor: number, limit: number, order: 'asc' | 'desc' = 'asc') {
    const desc = order === 'desc';
    const before = desc && cursor > 0 ? cursor : Number.POSITIVE_INFINITY;
    if (sessionId !== undefined) {
      const ids = new Set<string>();
      for (const s of this.log.index('session', sessionId)?.values() ?? []) ids.add(s.traceId);
      const all = [...ids].map((id) => this.#item(id)).filter((t): t is TraceItem => !!t);
      const page = desc
        ? all.filter((t) => t.seq < before).sort((a, b) => b.seq - a.seq)
        : all.filter((t) => t.seq > cursor).sort((a, b) => a.seq - b.seq);
      return { items: page.slice(0, limit), total: all.length, hasMore: page.length > limit };
    }
    if (desc) return this.#newest(before, limit);
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

  /** Newest first: walks the log back from `before` (no scan of what is older than the page). */
  #newest(before: number, limit: number) {
    const items: TraceItem[] = [];
    const d = this.log.log.entries;
    const start = before === Number.POSITIVE_INFINITY ? d.length - 1 : d.indexAfter(before - 1) - 1;
    for (let i = start; i >= 0; i--) {
      const span = d.at(i) as PackedSpan;
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
    if (f.traceId !== undefined) return viewsOf(this.log.page(['trace', f.traceId], cursor, limit).items);
    const out: PackedSpan[] = [];
    const d = this.log.log.entries;
    for (const s of d.values(d.indexAfter(cursor))) {
      if (f.sessionId !== undefined && !this.inSession(s.traceId, f.sessionId)) continue;
      out.push(s);
      if (out.length === limit) break;
    }
    return viewsOf(out);
  }

  inSession(traceId: string, sessionId: string): boolean {
    for (const s of this.log.index('trace', traceId)?.values() ?? [])
      if (s.sessionId === sessionId) return true;
    return false;
  }

  async purge(): Promise<number> {
    for (const e of this.log.log.entries.values()) this.#slabs.release(e);
    return this.log.clear();
  }

  override stats(): StoreStats {
    return { ...super.stats(), slabBytes: this.#slabs.heldBytes };
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
    return { traceId, seq: last.seq, spans: viewsOf([...d.values()]) };
  }
}
