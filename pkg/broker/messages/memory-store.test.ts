import { describe, expect, it } from 'vitest';
import { MemoryMessageStore } from './memory-store.ts';
import { messageStoreContract } from './store.contract.ts';

const make = (maxItems = 1000, maxBytes = 1 << 30) =>
  new MemoryMessageStore({ caps: { maxItems, maxBytes, conversations: 100 }, defaultTtlSeconds: 3600 });

messageStoreContract('memory', async () => make());

describe('MemoryMessageStore caps', () => {
  it('evicts the oldest first by count and by bytes, keeping indexes consistent', async () => {
    const s = make(3);
    for (let i = 0; i < 5; i++)
      await s.append({
        conversation_id: `c${i % 2}`,
        query_id: 'q',
        messages: [{ role: 'user', content: `${i}` }],
      });
    expect((await s.page({}, 0, 10)).items.map((e) => e.seq)).toEqual([3, 4, 5]);
    expect((await s.page({ conversationId: 'c0' }, 0, 10)).items.map((e) => e.seq)).toEqual([3, 5]);
    expect((await s.status()).conversations.c0?.message_count).toBe(2);

    const small = make(1000, 2000);
    for (let i = 0; i < 50; i++)
      await small.append({
        conversation_id: 'c',
        query_id: 'q',
        messages: [{ role: 'user', content: 'x'.repeat(100) }],
      });
    const kept = (await small.page({}, 0, 1000)).items;
    expect(kept.reduce((n, e) => n + e.bytes, 0)).toBeLessThanOrEqual(2000);
    expect(kept.at(-1)?.seq).toBe(50);
  });

  it('sweeps expired messages', async () => {
    let now = 0;
    const s = new MemoryMessageStore({
      caps: { maxItems: 10, maxBytes: 1 << 20, conversations: 10 },
      defaultTtlSeconds: 10,
      now: () => now,
    });
    await s.append({
      conversation_id: 'c',
      query_id: 'q',
      messages: [{ role: 'user', content: 'a' }],
      ttl_seconds: 1,
    });
    await s.append({ conversation_id: 'c', query_id: 'q', messages: [{ role: 'user', content: 'b' }] });
    now = 2000;
    s.sweep();
    expect((await s.page({ conversationId: 'c' }, 0, 10)).items.map((e) => e.seq)).toEqual([2]);
  });
});
