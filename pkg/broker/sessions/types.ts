import { z } from 'zod';
import type { StoredEvent } from '../events/types.ts';
import type { StoredMessage } from '../messages/types.ts';

export type SessionStatus = 'active' | 'idle' | 'error';
export type QueryState = 'pending' | 'running' | 'done' | 'error' | 'canceled';

export interface SessionQuery {
  queryId: string;
  queryName?: string | undefined;
  queryNamespace?: string | undefined;
  status: QueryState;
  startedAt?: string | undefined;
  endedAt?: string | undefined;
}

/** The wire shape of a session (GET /sessions items, GET /sessions/{id}, watch frames). */
export interface SessionView {
  sessionId: string;
  sequence: number;
  name: string;
  status: SessionStatus;
  createdAt: string;
  firstActivity: string;
  lastActivity: string;
  counts: { queries: number; messages: number; events: number; errors: number; conversations: number };
  queries: SessionQuery[];
  conversations: string[];
}

const isoDate = z
  .string()
  .refine((v) => !Number.isNaN(Date.parse(v)), 'must be an ISO 8601 date or timestamp');

export const sessionsQuery = z.object({
  status: z.enum(['active', 'idle', 'error']).optional(),
  search: z.string().max(256).optional(),
  sort: z.enum(['date', 'name', 'conversations']).optional(),
  order: z.enum(['asc', 'desc']).optional(),
  dateFrom: isoDate.optional(),
  dateTo: isoDate.optional(),
  session_id: z.string().min(1).optional(),
  offset: z
    .string()
    .regex(/^\d{1,9}$/, 'offset must be a non-negative integer')
    .transform(Number)
    .optional(),
});
export type SessionFilter = Omit<z.output<typeof sessionsQuery>, 'offset'>;

export const sessionBody = z
  .object({
    sessionId: z.string().min(1).max(256).optional(),
    name: z.string().max(256).optional(),
  })
  .optional();

export interface SessionPage {
  items: SessionView[];
  total: number;
  hasMore: boolean;
  nextCursor: number;
  statusCounts: Record<SessionStatus, number>;
}

export interface SessionListOptions {
  filter: SessionFilter;
  cursor?: number | undefined;
  limit: number;
  offset?: number | undefined;
}

/** Storage seam of sessions (a roll-up fed by the event and message change feeds). */
export interface SessionStore {
  head(): number;
  /** Durable backends: the committed position of the shared store (see core/watch-route `watchHead`). */
  committedHead?(): Promise<number>;
  recordEvent(e: StoredEvent): void;
  recordMessage(m: StoredMessage): void;
  create(input: {
    sessionId?: string | undefined;
    name?: string | undefined;
  }): Promise<{ session: SessionView; created: boolean }>;
  get(id: string): Promise<SessionView | undefined>;
  list(o: SessionListOptions): Promise<SessionPage>;
  /** Sessions after `cursor` matching `filter`, in sequence order (watch replay). */
  changes(filter: SessionFilter, cursor: number, limit: number): Promise<SessionView[]>;
  matches(s: SessionView, filter: SessionFilter): boolean;
  purge(): Promise<number>;
  /** Called on every change; the view and JSON are built only if the listener asks for them. */
  onChange(listener: (seq: number, view: () => SessionView, json: () => string) => void): void;
  close(): Promise<void>;
}
