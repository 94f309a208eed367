import { z } from 'zod';
import type { Entry } from '../core/capped-log.ts';
import type { Page } from '../core/seq-deque.ts';
import type { Queryable } from '../pg/index.ts';

export const chatMessage = z
  .object({ role: z.string().min(1, 'role must not be empty'), content: z.unknown().optional() })
  .passthrough();

export const messagesBody = z.object({
  conversation_id: z.string().min(1, 'conversation_id is required').max(256),
  query_id: z.string().max(256).optional().default(''),
  messages: z.array(chatMessage).max(10_000),
  ttl_seconds: z.number().int().positive().optional(),
});
export type MessagesInput = z.input<typeof messagesBody>;

export const conversationBody = z
  .object({ conversation_id: z.string().min(1).max(256).optional() })
  .optional();

/** A stored message: the record JSON (sequence first) plus what indexes and expiry need. */
export interface StoredMessage extends Entry {
  conversationId: string;
  queryId: string;
  expiresAt: number;
}

export interface ConversationInfo {
  conversation_id: string;
  sequence: number;
  created_at: string;
  last_activity: string;
  message_count: number;
  query_count: number;
}

export interface MessageFilter {
  conversationId?: string | undefined;
  queryId?: string | undefined;
}

export interface MemoryStatus {
  total_conversations: number;
  total_messages: number;
  conversations: Record<string, { message_count: number; query_count: number }>;
}

/** Storage seam of messages and conversations; every backend passes `store.contract.ts`. */
export interface MessageStore {
  /** Last sequence ever assigned (also after purges). */
  head(): number;
  /** Durable backends: the committed position of the shared store (see core/watch-route `watchHead`). */
  committedHead?(): Promise<number>;
  append(input: z.output<typeof messagesBody>): Promise<StoredMessage[]>;
  page(f: MessageFilter, cursor: number, limit: number): Promise<Page<StoredMessage>>;
  slice(f: MessageFilter, offset: number, limit: number): Promise<{ items: StoredMessage[]; total: number }>;
  /** Deletes messages matching the filter (an empty filter deletes all messages); returns the count. */
  deleteMessages(f: MessageFilter): Promise<number>;
  createConversation(id?: string): Promise<{ conversation: ConversationInfo; created: boolean }>;
  conversations(cursor: number, limit: number): Promise<Page<ConversationInfo>>;
  conversationIds(): Promise<string[]>;
  conversation(id: string): Promise<ConversationInfo | undefined>;
  /** Undefined when the conversation does not exist. */
  deleteConversation(id: string): Promise<{ messages: number } | undefined>;
  deleteConversations(): Promise<{ conversations: number; messages: number }>;
  status(): Promise<MemoryStatus>;
  /** Last conversation sequence assigned (conversations have their own sequence). */
  conversationHead(): number;
  conversationCommittedHead?(): Promise<number>;
  /** Called for every created conversation. */
  onConversation(listener: (c: ConversationInfo) => void): void;
  /** Change feed: called for every stored message, in sequence order. */
  onAppend(listener: (m: StoredMessage) => void): void;
  close(): Promise<void>;
}

/**
 * What messages feed of the session roll-up (sessions/open.ts hands it to open.ts): each stored
 * message, or — both on PostgreSQL — inside the append's own transaction, once, by the writer.
 * Declared here so that messages know nothing else of sessions.
 */
export interface MessageRollup {
  recordMessage(m: StoredMessage): void;
  /** Sessions on PostgreSQL (sessions/pg-store.ts). */
  inTx?: MessageRollupInTx | undefined;
}

export interface MessageRollupInTx {
  /** Rolls messages up inside the caller's transaction; call the returned function after COMMIT. */
  rollupInTx(
    client: Queryable,
    input: { kind: 'messages'; items: StoredMessage[]; at: string },
  ): Promise<() => void>;
}

/** The memory contract lists records without `sequence`, which is always the first key. */
export function withoutSequence(json: string): string {
  return `{${json.slice(json.indexOf(',') + 1)}`;
}
