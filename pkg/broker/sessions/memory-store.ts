import { randomUUID } from 'node:crypto';
import type { StoreStats } from '../core/capped-log.ts';
import type { Journal } from '../core/journal.ts';
import { seqLine } from '../core/persist.ts';
import { SeqDeque } from '../core/seq-deque.ts';
import type { StoredEvent } from '../events/types.ts';
import type { StoredMessage } from '../messages/types.ts';
import { matchesView } from './filter.ts';
import { Session } from './rollup.ts';
import type {
  SessionFilter,
  SessionListOptions,
  SessionPage,
  SessionStatus,
  SessionStore,
  SessionView,
} from './types.ts';

export interface MemorySessionStoreOptions {
  maxSessions: number;
  ttlSeconds: number;
  journal?: Journal | undefined;
  now?: () => number;
}

interface Mark {
  seq: number;
  session: Session;
}

/**
 * Sessions rolled up in memory from the event and message feeds. Each change gives the session a
 * new sequence; `#order` holds (sequence, session) marks in order, stale marks being skipped and
 * compacted away, so cursor lists and the eviction of the least recently changed are cheap.
 */
export class MemorySessionStore implements SessionStore {
  readonly #sessions = new Map<string, Session>();
  readonly #order = new SeqDeque<Mark>();
  // Which session a query belongs to (learned from its events; messages carry no session id).
  readonly #queryToSession = new Map<string, string>();
  readonly #listeners: Array<(seq: number, view: () => SessionView, json: () => string) => void> = [];
  readonly #opts: MemorySessionStoreOptions;
  readonly #now: () => number;
  #seq = 0;
  #evicted = 0;

  constructor(opts: MemorySessionStoreOptions) {
    this.#opts = opts;
    this.#now = opts.now ?? Date.now;
  }

  /** Restores explicit sessions and the sequence watermark; the roll-up is replayed by the caller. */
  async load(): Promise<void> {
    await this.#opts.journal?.load((v) => {
      if (typeof v.$seq === 'number') this.#seq = Math.max(this.#seq, v.$seq);
      else if (v.$op === 'create' && typeof v.id === 'string')
        this.#session(v.id, String(v.at), v.name as string);
      else if (v.$op === 'purge') this.#clear();
    });
  }

  stats(): StoreStats {
    return { items: this.#sessions.size, evicted: this.#evicted };
  }

  head(): number {
    return this.#seq;
  }

  onChange(listener: (seq: number, view: () => SessionView, json: () => string) => void): void {
    this.#listeners.push(listener);
  }

  recordEvent(e: StoredEvent): void {
    const id = e.sessionId;
    if (!id) return;
    const early = e.queryId ? this.#earlyMessages(e.queryId, id) : undefined;
    if (e.queryId) this.#remember(e.queryId, id);
    const s = this.#session(id, e.timestamp);
    if (early) s.absorb(early);
    s.applyEvent(e.reason, e.eventType, e.timestamp, e.data);
    this.#bump(s);
  }

  recordMessage(m: StoredMessage): void {
    const id = this.#queryToSession.get(m.queryId) ?? m.queryId;
    if (!id) return;
    const ms = this.#now();
    const at = this.#iso(ms);
    const s = this.#session(id, at);
    s.applyMessage(m.queryId, m.conversationId, at, ms);
    this.#bump(s);
  }

  async create(input: { sessionId?: string | undefined; name?: string | undefined }) {
    const id = input.sessionId ?? randomUUID();
    const existing = this.#sessions.get(id);
    if (existing && input.name === undefined) return { session: existing.view(), created: false };
    const at = new Date(this.#now()).toISOString();
    const s = this.#session(id, at, input.name);
    if (input.name !== undefined) s.name = input.name;
    s.invalidate();
    this.#bump(s);
    this.#opts.journal?.append(JSON.stringify({ $op: 'create', id, at, name: s.name }));
    return { session: s.view(), created: !existing };
  }

  async get(id: string): Promise<SessionView | undefined> {
    const s = this.#sessions.get(id);
    return s && this.#visible(s) ? s.view() : undefined;
  }

  matches(v: SessionView, f: SessionFilter, ignoreStatus = false): boolean {
    return matchesView(v, f, ignoreStatus);
  }

  async list(o: SessionListOptions): Promise<SessionPage> {
    const statusCounts: Record<SessionStatus, number> = { active: 0, idle: 0, error: 0 };
    const cursor = o.cursor ?? 0;
    const matching: SessionView[] = [];
    let watermark = cursor;
    for (const s of this.#live()) {
      if (s.seq <= cursor) continue;
      const v = s.view();
      if (!this.matches(v, o.filter, true)) continue;
      statusCounts[v.status]++;
      if (o.filter.status !== undefined && v.status !== o.filter.status) continue;
      matching.push(v);
      watermark = Math.max(watermark, v.sequence);
    }
    const sorted = o.filter.sort ? sortViews(matching, o.filter.sort, o.filter.order) : matching;
    const start = o.filter.sort ? (o.offset ?? 0) : 0;
    const items = sorted.slice(start, start + o.limit);
    const hasMore = start + items.length < sorted.length;
    // Sequence order pages by cursor; a sorted view pages by offset and reports the change watermark.
    const nextCursor = o.filter.sort ? watermark : (items.at(-1)?.sequence ?? cursor);
    return { items, total: sorted.length, hasMore, nextCursor, statusCounts };
  }

  async changes(filter: SessionFilter, cursor: number, limit: number): Promise<SessionView[]> {
    const out: SessionView[] = [];
    for (const m of this.#order.values(this.#order.indexAfter(cursor))) {
      if (m.seq !== m.session.seq || !this.#visible(m.session)) continue;
      const v = m.session.view();
      if (this.matches(v, filter)) out.push(v);
      if (out.length === limit) break;
    }
    return out;
  }

  async purge(): Promise<number> {
    const n = this.#sessions.size;
    this.#clear();
    this.#opts.journal?.append(`{"$op":"purge"}`);
    this.#opts.journal?.append(seqLine(this.#seq));
    return n;
  }

  sweep(): void {
    this.#opts.journal?.append(seqLine(this.#seq));
    this.#opts.journal?.flush();
  }

  async close(): Promise<void> {
    this.#opts.journal?.append(seqLine(this.#seq));
    this.#opts.journal?.close();
  }

  /** Live sessions in sequence order. */
  *#live(): Iterable<Session> {
    for (const m of this.#order.values())
      if (m.seq === m.session.seq && this.#visible(m.session)) yield m.session;
  }

  /** Visibility TTL: a session idle longer than it is hidden (not deleted). */
  #visible(s: Session): boolean {
    return s.lastActivityMs + this.#opts.ttlSeconds * 1000 > this.#now();
  }

  // The last timestamp formatted: a batch of messages is recorded within one millisecond.
  #isoMs = Number.NaN;
  #isoAt = '';

  #iso(ms: number): string {
    if (ms !== this.#isoMs) {
      this.#isoMs = ms;
      this.#isoAt = new Date(ms).toISOString();
    }
    return this.#isoAt;
  }

  #session(id: string, at: string, name?: string): Session {
    let s = this.#sessions.get(id);
    if (!s) {
      s = new Session(id, at, name);
      this.#sessions.set(id, s);
    }
    return s;
  }

  #bump(s: Session): void {
    s.seq = ++this.#seq;
    s.invalidate();
    this.#order.push({ seq: s.seq, session: s });
    this.#evict();
    if (this.#order.length > 2 * this.#sessions.size + 1024)
      this.#order.removeWhere((m) => m.seq !== m.session.seq);
    for (const l of this.#listeners)
      l(
        s.seq,
        () => s.view(),
        () => s.json(),
      );
  }

  #evict(): void {
    while (this.#sessions.size > this.#opts.maxSessions) {
      const m = this.#order.shift();
      if (!m) break;
      if (m.seq === m.session.seq && this.#sessions.delete(m.session.id)) this.#evicted++;
    }
  }

  /**
   * A query's messages can be written before the first of its events names its session (a fast
   * query's memory write races the event feed): they were rolled up under the query's id. When its
   * session is learned, that stand-in is taken out, to be absorbed by the session (returned).
   */
  #earlyMessages(queryId: string, sessionId: string): Session | undefined {
    if (sessionId === queryId || this.#queryToSession.has(queryId)) return undefined;
    const early = this.#sessions.get(queryId);
    if (!early?.isStandInFor(queryId)) return undefined;
    this.#sessions.delete(queryId);
    early.seq = -1; // its marks in #order are stale from now on
    return early;
  }

  #remember(queryId: string, sessionId: string): void {
    if (this.#queryToSession.get(queryId) === sessionId) return;
    this.#queryToSession.delete(queryId);
    this.#queryToSession.set(queryId, sessionId);
    if (this.#queryToSession.size > this.#opts.maxSessions * 10) {
      const oldest = this.#queryToSession.keys().next().value as string;
      this.#queryToSession.delete(oldest);
    }
  }

  #clear(): void {
    this.#sessions.clear();
    this.#order.clear();
    this.#queryToSession.clear();
  }
}

function sortViews(items: SessionView[], sort: 'date' | 'name' | 'conversations', order?: 'asc' | 'desc') {
  const dir = (order ?? (sort === 'name' ? 'asc' : 'desc')) === 'asc' ? 1 : -1;
  const key = (v: SessionView): number | string =>
    sort === 'date'
      ? Date.parse(v.lastActivity)
      : sort === 'name'
        ? v.name.toLowerCase()
        : v.counts.conversations;
  return items.sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    return (ka < kb ? -1 : ka > kb ? 1 : a.sequence - b.sequence) * dir;
  });
}
