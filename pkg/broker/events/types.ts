import { z } from 'zod';
import type { TimedEntry } from '../core/indexed-log.ts';
import type { Page } from '../core/seq-deque.ts';
import type { Queryable } from '../pg/index.ts';

const isoDate = z.string().refine((v) => !Number.isNaN(Date.parse(v)), 'must be an ISO 8601 timestamp');

export const eventBody = z.object({
  timestamp: isoDate.optional(),
  // Clients of the reference broker omit eventType, timestamp and message: they default (Normal,
  // the receive time, empty). What an event is about (reason, data.queryId) is required.
  eventType: z.enum(['Normal', 'Warning']).optional().default('Normal'),
  reason: z.string().min(1, 'reason is required').max(256),
  message: z
    .string()
    .max(64 * 1024)
    .optional()
    .default(''),
  data: z
    .object({
      queryId: z.string({ message: 'data.queryId is required' }).min(1, 'data.queryId is required').max(256),
      queryName: z.string().max(256).optional(),
      queryNamespace: z.string().max(256).optional(),
      sessionId: z.string().max(256).optional(),
    })
    .catchall(z.union([z.string(), z.number(), z.boolean(), z.null()])),
});
export type EventInput = z.output<typeof eventBody>;

export const MAX_EVENT_BATCH = 1000;
export const eventPost = z.union([
  eventBody,
  z
    .array(eventBody)
    .min(1, 'an event batch must not be empty')
    .max(MAX_EVENT_BATCH, `an event batch holds at most ${MAX_EVENT_BATCH} events`),
]);

export interface StoredEvent extends TimedEntry {
  queryId: string;
  sessionId: string;
  reason: string;
  eventType: string;
  timestamp: string;
  data: Record<string, unknown>;
}

export interface EventFilter {
  queryId?: string | undefined;
  sessionId?: string | undefined;
}

/** Storage seam of operation events; every backend passes `store.contract.ts`. */
export interface EventStore {
  head(): number;
  /** Durable backends: the committed position of the shared store (see core/watch-route `watchHead`). */
  committedHead?(): Promise<number>;
  append(input: EventInput): Promise<StoredEvent>;
  /** A batch, stored all or nothing with consecutive sequences (a durable backend in one transaction). */
  appendMany(inputs: EventInput[]): Promise<StoredEvent[]>;
  page(f: EventFilter, cursor: number, limit: number): Promise<Page<StoredEvent>>;
  /**
   * Deletes the events of one query, or all when no query is given; with `namespace`, only the
   * query's events whose `data.queryNamespace` is that namespace (same-named Queries of several
   * namespaces share a broker's query id).
   */
  delete(queryId?: string, namespace?: string): Promise<number>;
  onAppend(listener: (e: StoredEvent) => void): void;
  close(): Promise<void>;
}

/**
 * What events feed of the session roll-up (sessions/open.ts hands it to open.ts): each stored
 * event, or — both on PostgreSQL — inside the insert's own transaction, once, by the writer.
 * Declared here so that events know nothing else of sessions.
 */
export interface EventRollup {
  recordEvent(e: StoredEvent): void;
  /** Sessions on PostgreSQL (sessions/pg-store.ts). */
  inTx?: EventRollupInTx | undefined;
}

export interface EventRollupInTx {
  /** Rolls events up inside the caller's transaction; call the returned function after COMMIT. */
  rollupInTx(client: Queryable, input: { kind: 'events'; items: StoredEvent[] }): Promise<() => void>;
  /** Marks an event its writer rolled up, so that `recordEvent` of it (on any replica) does not count it again. */
  skip(record: object): void;
}

/** Session of an event: `data.sessionId`, else the query id (wire convention). */
export function sessionOf(data: Record<string, unknown>): string {
  const s = data.sessionId;
  if (typeof s === 'string' && s) return s;
  const q = data.queryId;
  return typeof q === 'string' ? q : '';
}
