import { type DomainContext, type OpenedDomain, openedDomain } from '../core/domain.ts';
import { openJournal } from '../core/persist.ts';
import { MemoryTraceStore } from './memory-store.ts';
import { spanMeta, TRACES_TOPIC } from './topics.ts';
import type { TraceStore } from './types.ts';

/** Spans in memory (traces have no other backend). */
export async function openTraces(ctx: DomainContext): Promise<OpenedDomain<TraceStore>> {
  const { config, hub } = ctx;
  const store = new MemoryTraceStore({
    caps: config.caps.spans,
    ttlSeconds: config.ttl.eventsSeconds,
    journal: openJournal(ctx.persist, 'spans'),
  });
  return openedDomain(store, (s) =>
    s.onAppend((e) => hub.publish(TRACES_TOPIC, e.seq, spanMeta(e), () => e.json())),
  );
}
