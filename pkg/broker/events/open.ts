import { type DomainContext, type FeedingDomain, feederBackend, openedDomain } from '../core/domain.ts';
import { openJournal } from '../core/persist.ts';
import { MemoryEventStore } from './memory-store.ts';
import { EVENTS_TOPIC, eventMeta } from './topics.ts';
import type { EventRollup, EventStore } from './types.ts';

/** Events in memory (the default) or in PostgreSQL (EVENT_BACKEND=postgres), feeding the session roll-up. */
export async function openEvents(
  ctx: DomainContext,
  rollup: EventRollup,
): Promise<FeedingDomain<EventStore, EventRollup>> {
  const { config, hub } = ctx;
  const { pg, inTx } = feederBackend(ctx, config.backends.events, rollup);
  const connect = (store: EventStore) =>
    store.onAppend((e) => {
      hub.publish(EVENTS_TOPIC, e.seq, eventMeta(e), e.json);
      if (!inTx) rollup.recordEvent(e);
    });
  if (pg) {
    // Imported only when configured (docs/broker.md "Footprint").
    const { openPgEventStore } = await import('./pg-store.ts');
    return openedDomain(
      await openPgEventStore(pg, { ttlSeconds: config.ttl.eventsSeconds, sessions: inTx }),
      connect,
    );
  }
  const memory = new MemoryEventStore({
    caps: config.caps.events,
    ttlSeconds: config.ttl.eventsSeconds,
    journal: openJournal(ctx.persist, 'events'),
  });
  const replay = (r: EventRollup) => {
    for (const e of memory.entries()) r.recordEvent(e);
  };
  return { ...openedDomain(memory, connect), replay };
}
