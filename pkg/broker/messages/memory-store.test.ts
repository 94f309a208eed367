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

describe('MemoryMessageStore slabs', () => {
  it('serves a held entry the same JSON after the store dropped it and reused its bytes', async () => {
    const s = make(2);
    const [held] = await s.append({
      conversation_id: 'c',
      query_id: 'q',
      messages: [{ role: 'user', content: 'héllo 漢字 😀' }],
    });
    const before = held?.json;
    expect(JSON.parse(before ?? '{}').message.content).toBe('héllo 漢字 😀');
    // Evicted by the count cap, then thousands of writes through recycled slabs.
    for (let i = 0; i < 3000; i++)
      await s.append({
        conversation_id: 'c',
        query_id: 'q',
        messages: [{ role: 'user', content: 'x'.repeat(200) }],
      });
    expect(held?.json).toBe(before);
    expect((await s.page({}, 0, 10)).items.map((e) => JSON.parse(e.json).sequence)).toEqual([3000, 3001]);
  });

  it('keeps the survivors of a deleted conversation intact while it compacts their slabs', async () => {
    const s = make(100_000);
    for (let i = 0; i < 20_000; i++)
      await s.append({
        conversation_id: i % 10 === 0 ? 'kept' : 'gone',
        query_id: `q${i}`,
        messages: [{ role: 'user', content: `message ${i}` }],
      });
    expect(s.stats().slabBytes).toBeGreaterThanOrEqual(10 * 256 * 1024);
    await s.deleteConversation('gone');
    const left = (await s.page({}, 0, 2000)).items;
    expect(left.map((e) => JSON.parse(e.json).message.content)).toEqual(
      Array.from({ length: 2000 }, (_, j) => `message ${j * 10}`),
    );
    // The 2,000 survivors fit in two 256 KB slabs once compacted, beside at most four spares
    // kept for reuse; the 20,000 took ten.
    expect(s.stats().slabBytes).toBeLessThanOrEqual(6 * 256 * 1024);
  });
});

describe('MemoryMessageStore pages', () => {
  it('cuts a page decoded in one run into exactly its messages, ASCII or not, across slabs', async () => {
    const s = make(100_000);
    const contents = Array.from({ length: 3000 }, (_, i) =>
      i % 7 === 3 ? `naïve ${i} 漢字` : `plain ${i} ${'x'.repeat(i % 50)}`,
    );
    for (const [i, content] of contents.entries())
      await s.append({
        conversation_id: i % 2 ? 'a' : 'b',
        query_id: 'q',
        messages: [{ role: 'user', content }],
      });
    const all = (await s.page({}, 0, 5000)).items;
    expect(all.map((e) => JSON.parse(e.json).message.content)).toEqual(contents);
    const a = (await s.slice({ conversationId: 'a' }, 10, 500)).items;
    expect(a.map((e) => JSON.parse(e.json).message.content)).toEqual(
      contents.filter((_, i) => i % 2).slice(10, 510),
    );
  });
});
