import type { StoredEvent } from './types.ts';

/** The SSE hub topic of events: open.ts publishes to it, the routes watch it. */
export const EVENTS_TOPIC = 'events';

/** What a watcher's filter sees of an event without parsing it: its query and session. */
export type EventMeta = { q: string; s: string };
export const eventMeta = (e: StoredEvent): EventMeta => ({ q: e.queryId, s: e.sessionId });
