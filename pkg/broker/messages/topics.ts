import type { StoredMessage } from './types.ts';

/**
 * The SSE hub topics of messages and conversations: open.ts publishes to them, the routes watch
 * them. Here, below both, so neither imports the other.
 */
export const MESSAGES_TOPIC = 'messages';
export const CONVERSATIONS_TOPIC = 'conversations';

/** What a watcher's filter sees of a message without parsing it: its conversation and query. */
export type MessageMeta = { c: string; q: string };
export const messageMeta = (e: StoredMessage): MessageMeta => ({ c: e.conversationId, q: e.queryId });
