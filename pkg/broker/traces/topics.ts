import type { StoredSpan } from './types.ts';

/** The SSE hub topic of spans: open.ts publishes to it, the routes watch it. */
export const TRACES_TOPIC = 'traces';

/** What a watcher's filter sees of a span without decoding it: its trace and session. */
export type SpanMeta = { t: string; s: string };
export const spanMeta = <E extends Pick<StoredSpan, 'traceId' | 'sessionId'>>(e: E): SpanMeta => ({
  t: e.traceId,
  s: e.sessionId,
});
