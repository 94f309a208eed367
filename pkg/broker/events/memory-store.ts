import { LogStore, type LogStoreOptions, timedEntry } from '../core/log-store.ts';
import type { Page } from '../core/seq-deque.ts';
import { type EventFilter, type EventInput, type EventStore, type StoredEvent, sessionOf } from './types.ts';

export type MemoryEventStoreOptions = LogStoreOptions;

function entryOf(r: Record<string, unknown>, json: string, expiresAt: number): StoredEvent {
  const data = (r.data ?? {}) as Record<string, unknown>;
  return {
    ...timedEntry(r, json, expiresAt, 96),
    queryId: typeof data.queryId === 'string' ? data.queryId : '',
    sessionId: sessionOf(data),
    reason: String(r.reason),
    eventType: String(r.eventType),
    timestamp: String(r.timestamp),
    data,
  };
}

/** Operation events in memory, indexed by query and by session. */
export class MemoryEventStore extends LogStore<StoredEvent, 'query' | 'session'> implements EventStore {
  constructor(opts: MemoryEventStoreOptions) {
    super(opts, {
      keys: { query: (e) => e.queryId, session: (e) => e.sessionId },
      revive: entryOf,
      onOp: (op) => {
        if (op.$op === 'delns') this.#dropNamespace(String(op.q), String(op.ns));
      },
    });
  }

  /** Entries in sequence order (sessions are rebuilt from them after a restart). */
  entries(): Iterable<StoredEvent> {
    return this.log.log.entries.values();
  }

  async append(input: EventInput): Promise<StoredEvent> {
    const now = this.log.now();
    const record = {
      sequence: this.log.nextSeq(),
      timestamp: input.timestamp ?? new Date(now).toISOString(),
      eventType: input.eventType,
      reason: input.reason,
      message: input.message,
      data: input.data,
    };
    const e = entryOf(record, JSON.stringify(record), now + this.ttlMs);
    this.log.append(e);
    this.emit(e);
    return e;
  }

  /** `append` runs synchronously to its end, so nothing interleaves: the sequences are consecutive. */
  appendMany(inputs: EventInput[]): Promise<StoredEvent[]> {
    return Promise.all(inputs.map((input) => this.append(input)));
  }

  async page(f: EventFilter, cursor: number, limit: number): Promise<Page<StoredEvent>> {
    if (f.queryId !== undefined && f.sessionId !== undefined) {
      const d = this.log.index('query', f.queryId);
      const all = d ? [...d.values(d.indexAfter(cursor))].filter((e) => e.sessionId === f.sessionId) : [];
      const total = d ? [...d.values()].filter((e) => e.sessionId === f.sessionId).length : 0;
      return { items: all.slice(0, limit), total, hasMore: all.length > limit };
    }
    if (f.queryId !== undefined) return this.log.page(['query', f.queryId], cursor, limit);
    if (f.sessionId !== undefined) return this.log.page(['session', f.sessionId], cursor, limit);
    return this.log.page(undefined, cursor, limit);
  }

  async delete(queryId?: string, namespace?: string): Promise<number> {
    if (queryId === undefined) return this.log.clear();
    if (namespace === undefined) return this.log.remove('query', queryId);
    const n = this.#dropNamespace(queryId, namespace);
    this.log.journalOp({ $op: 'delns', q: queryId, ns: namespace });
    return n;
  }

  #dropNamespace(queryId: string, namespace: string): number {
    const d = this.log.index('query', queryId);
    if (!d) return 0;
    const gone = new Set([...d.values()].filter((e) => e.data.queryNamespace === namespace));
    return gone.size ? this.log.dropWhere((e) => gone.has(e)) : 0;
  }

  sweep(): void {
    this.log.sweep();
  }

  async close(): Promise<void> {
    this.log.close();
  }
}
