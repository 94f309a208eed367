import { type DomainContext, type FeedingDomain, feederBackend, openedDomain } from '../core/domain.ts';
import { openJournal } from '../core/persist.ts';
import { MemoryMessageStore } from './memory-store.ts';
import { CONVERSATIONS_TOPIC, MESSAGES_TOPIC, messageMeta } from './topics.ts';
import type { MessageRollup, MessageStore } from './types.ts';

/**
 * Messages and conversations in memory (the default) or in PostgreSQL (MESSAGE_BACKEND=postgres),
 * feeding the session roll-up.
 */
export async function openMessages(
  ctx: DomainContext,
  rollup: MessageRollup,
): Promise<FeedingDomain<MessageStore, MessageRollup>> {
  const { config, hub } = ctx;
  const { pg, inTx } = feederBackend(ctx, config.backends.messages, rollup);
  const connect = (store: MessageStore) => {
    store.onAppend((m) => {
      hub.publish(MESSAGES_TOPIC, m.seq, messageMeta(m), m.json);
      if (!inTx) rollup.recordMessage(m);
    });
    store.onConversation((c) =>
      hub.publish(CONVERSATIONS_TOPIC, c.sequence, undefined, () => JSON.stringify(c)),
    );
  };
  if (pg) {
    // Imported only when configured (docs/broker.md "Footprint").
    const { openPgMessageStore } = await import('./pg-store.ts');
    const store = await openPgMessageStore(pg, {
      defaultTtlSeconds: config.ttl.messagesSeconds,
      rollup: inTx && ((client, items, at) => inTx.rollupInTx(client, { kind: 'messages', items, at })),
    });
    return openedDomain(store, connect);
  }
  const memory = new MemoryMessageStore({
    caps: { ...config.caps.messages, conversations: config.caps.conversations },
    defaultTtlSeconds: config.ttl.messagesSeconds,
    journal: openJournal(ctx.persist, 'messages'),
  });
  const replay = (r: MessageRollup) => {
    for (const m of memory.entries()) r.recordMessage(m);
  };
  return { ...openedDomain(memory, connect), replay };
}
