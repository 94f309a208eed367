import type { QueryState, SessionQuery, SessionStatus, SessionView } from './types.ts';

// A session lists its most recent queries and conversations; older ones only stay in the counts.
const MAX_QUERIES = 100;
const MAX_CONVERSATIONS = 100;

const TERMINAL: Record<string, QueryState> = {
  QueryExecutionComplete: 'done',
  QueryExecutionError: 'error',
  QueryExecutionCanceled: 'canceled',
};

/** One session's roll-up; the view and its JSON are rebuilt only after a change. */
export class Session {
  readonly id: string;
  seq = 0;
  name: string;
  createdAt: string;
  firstActivity: string;
  lastActivity: string;
  lastActivityMs: number;
  readonly queries = new Map<string, SessionQuery>();
  readonly conversations = new Set<string>();
  latestQuery: string | undefined;
  counts = { queries: 0, messages: 0, events: 0, errors: 0 };
  status: SessionStatus = 'idle';
  #json: string | undefined;
  #view: SessionView | undefined;

  constructor(id: string, at: string, name?: string) {
    this.id = id;
    this.name = name ?? id;
    this.createdAt = at;
    this.firstActivity = at;
    this.lastActivity = at;
    this.lastActivityMs = Date.parse(at) || Date.now();
  }

  /** Applies an operation event (query states follow the QueryExecution* reasons). */
  applyEvent(reason: string, eventType: string, at: string, data: Record<string, unknown>): void {
    this.counts.events++;
    if (eventType === 'Warning') this.counts.errors++;
    this.#touch(at);
    const queryId = typeof data.queryId === 'string' ? data.queryId : undefined;
    if (!queryId) {
      this.#changed();
      return;
    }
    const q = this.#query(queryId);
    if (typeof data.queryName === 'string') q.queryName = data.queryName;
    if (typeof data.queryNamespace === 'string') q.queryNamespace = data.queryNamespace;
    if (reason === 'QueryExecutionStart') {
      q.status = 'running';
      q.startedAt = at;
      q.endedAt = undefined;
      this.latestQuery = queryId;
    } else if (TERMINAL[reason]) {
      q.status = TERMINAL[reason];
      q.endedAt = at;
    }
    this.#changed();
  }

  /** `ms`: `at` as epoch milliseconds, when the caller has it. */
  applyMessage(queryId: string, conversationId: string, at: string, ms = Date.parse(at)): void {
    this.counts.messages++;
    this.#touch(at, ms);
    if (queryId) this.#query(queryId);
    this.#addConversation(conversationId);
    this.#changed();
  }

  #addConversation(conversationId: string): void {
    if (this.conversations.has(conversationId)) return;
    this.conversations.add(conversationId);
    if (this.conversations.size > MAX_CONVERSATIONS) {
      const oldest = this.conversations.values().next().value as string;
      this.conversations.delete(oldest);
    }
  }

  /**
   * Whether this session is only a stand-in for one query's early messages: named after that query
   * by the roll-up itself (not created or renamed by a user), no events, no other query.
   */
  isStandInFor(queryId: string): boolean {
    if (this.id !== queryId || this.name !== this.id || this.counts.events > 0) return false;
    for (const q of this.queries.keys()) if (q !== queryId) return false;
    return true;
  }

  /**
   * Takes in what `early` counted: the messages of one query written before any of its events
   * named its session (they were rolled up under the query's id). Its events were not: an event
   * carries the session id, so the query's events all land here.
   */
  absorb(early: Session): void {
    this.counts.messages += early.counts.messages;
    for (const queryId of early.queries.keys()) this.#query(queryId);
    for (const c of early.conversations) this.#addConversation(c);
    this.#touch(early.firstActivity);
    this.#touch(early.lastActivity, early.lastActivityMs);
    this.#changed();
  }

  view(): SessionView {
    this.#view ??= {
      sessionId: this.id,
      sequence: this.seq,
      name: this.name,
      status: this.status,
      createdAt: this.createdAt,
      firstActivity: this.firstActivity,
      lastActivity: this.lastActivity,
      counts: { ...this.counts, conversations: this.conversations.size },
      queries: [...this.queries.values()],
      conversations: [...this.conversations],
    };
    return this.#view;
  }

  json(): string {
    this.#json ??= JSON.stringify(this.view());
    return this.#json;
  }

  /** Drops the cached view (after `seq` or fields changed). */
  invalidate(): void {
    this.#json = undefined;
    this.#view = undefined;
  }

  #query(queryId: string): SessionQuery {
    let q = this.queries.get(queryId);
    if (!q) {
      q = { queryId, status: 'pending' };
      this.queries.set(queryId, q);
      this.counts.queries++;
      this.latestQuery ??= queryId;
      if (this.queries.size > MAX_QUERIES) {
        const oldest = this.queries.keys().next().value as string;
        if (oldest !== this.latestQuery) this.queries.delete(oldest);
      }
    }
    return q;
  }

  #touch(at: string, ms = Date.parse(at)): void {
    if (Number.isNaN(ms)) return;
    if (ms >= this.lastActivityMs) {
      this.lastActivityMs = ms;
      this.lastActivity = at;
      // The first activity is never after the last one: nothing earlier to compare with.
      return;
    }
    if (ms < Date.parse(this.firstActivity)) this.firstActivity = at;
  }

  /** Status: error if the latest query failed, active while one runs, idle otherwise. */
  #changed(): void {
    const latest = this.latestQuery ? this.queries.get(this.latestQuery) : undefined;
    let running = false;
    for (const q of this.queries.values()) if (q.status === 'running') running = true;
    this.status = latest?.status === 'error' ? 'error' : running ? 'active' : 'idle';
    this.invalidate();
  }
}
