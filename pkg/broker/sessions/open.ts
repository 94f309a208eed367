import { type DomainContext, type OpenedDomain, openedDomain, pgFor } from '../core/domain.ts';
import { openJournal } from '../core/persist.ts';
import type { EventRollup } from '../events/types.ts';
import type { MessageRollup } from '../messages/types.ts';
import { MemorySessionStore } from './memory-store.ts';
import { SESSIONS_TOPIC } from './topics.ts';
import type { SessionStore } from './types.ts';

/** What messages and events feed (each states what it needs of it in its own types.ts). */
export type SessionRollup = MessageRollup & EventRollup;

/** A domain that feeds sessions (core/domain.ts `FeedingDomain`): its memory store can replay what it kept. */
export interface RollupFeeder {
  replay?(rollup: SessionRollup): void;
}

export interface OpenedSessions extends OpenedDomain<SessionStore> {
  /** For the domains that feed sessions (messages/open.ts, events/open.ts). */
  rollup: SessionRollup;
  /**
   * In-memory sessions are a roll-up: after a restart they are rebuilt from what the feeders'
   * memory stores kept (call after every domain loaded). Over durable feeders they start empty (a
   * replica's memory sessions are its own); sessions in PostgreSQL are not rebuilt.
   */
  rebuild(feeders: RollupFeeder[]): void;
}

/** Sessions in memory (the default) or in PostgreSQL (SESSIONS_BACKEND=postgres). */
export async function openSessions(ctx: DomainContext): Promise<OpenedSessions> {
  const { config, hub } = ctx;
  const pg = pgFor(ctx, config.backends.sessions);
  // Imported only when configured (docs/broker.md "Footprint").
  const durable = pg
    ? await (await import('./pg-store.ts')).openPgSessionStore(pg, { ttlSeconds: config.ttl.sessionsSeconds })
    : undefined;
  const store =
    durable ??
    new MemorySessionStore({
      maxSessions: config.caps.sessions,
      ttlSeconds: config.ttl.sessionsSeconds,
      journal: openJournal(ctx.persist, 'sessions'),
    });
  const rollup: SessionRollup = {
    recordEvent: (e) => store.recordEvent(e),
    recordMessage: (m) => store.recordMessage(m),
    // Events and messages on PostgreSQL too roll up inside their own insert's transaction.
    inTx: durable,
  };
  const connect = (s: SessionStore) =>
    s.onChange((seq, view, json) => {
      // A session changes on every message: build its view only when someone watches.
      if (hub.hasSubscribers(SESSIONS_TOPIC)) hub.publish(SESSIONS_TOPIC, seq, view(), json);
    });
  return {
    ...openedDomain(store, connect),
    rollup,
    rebuild: (feeders) => {
      if (!durable) for (const f of feeders) f.replay?.(rollup);
    },
  };
}
