/** The SSE hub topic of sessions: open.ts publishes to it, the routes watch it. */
export const SESSIONS_TOPIC = 'sessions';
