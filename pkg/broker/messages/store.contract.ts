import { describe, expect, it } from 'vitest';
import type { MessageStore } from './types.ts';

/** The behaviour every MessageStore backend must have; run with a factory of fresh stores. */
export function messageStoreContract(name: string, make: () => Promise<MessageStore>): void {
  const add = (s: MessageStore, c: string, q: string, ...contents: string[]) =>
    s.append({
      conversation_id: c,
      query_id: q,
      messages: contents.map((content) => ({ role: 'user', content })),
    });

  describe(`MessageStore contract: ${name}`, () => {
    it('assigns strictly increasing sequences and pages by exclusive cursor', async () => {
      const s = await make();
      await add(s, 'c1', 'q1', 'a', 'b', 'c');
      await add(s, 'c2', 'q2', 'd');
      const p1 = await s.page({}, 0, 2);
      expect(p1.items.map((e) => e.seq)).toEqual([1, 2]);
      expect(p1).toMatchObject({ total: 4, hasMore: true });
      const p2 = await s.page({}, 2, 10);
      expect(p2.items.map((e) => JSON.parse(e.json).message.content)).toEqual(['c', 'd']);
      expect((await s.page({ conversationId: 'c1' }, 0, 10)).total).toBe(3);
      expect((await s.page({ queryId: 'q2' }, 0, 10)).items.map((e) => e.seq)).toEqual([4]);
      expect((await s.slice({ conversationId: 'c1' }, 1, 1)).items.map((e) => e.seq)).toEqual([2]);
      await s.close();
    });

    it('never reuses sequences after a purge', async () => {
      const s = await make();
      await add(s, 'c', 'q', 'a', 'b');
      expect(await s.deleteMessages({})).toBe(2);
      const [e] = await add(s, 'c', 'q', 'c');
      expect(e?.seq).toBe(3);
      expect(s.head()).toBe(3);
      await s.close();
    });

    it('keeps conversations, counts and deletes by query or conversation', async () => {
      const s = await make();
      const created = await s.createConversation();
      expect(created.created).toBe(true);
      expect((await s.createConversation(created.conversation.conversation_id)).created).toBe(false);
      await add(s, 'c', 'q1', 'a');
      await add(s, 'c', 'q2', 'b');
      expect(await s.conversation('c')).toMatchObject({ message_count: 2, query_count: 2 });
      expect(await s.deleteMessages({ conversationId: 'c', queryId: 'q1' })).toBe(1);
      expect((await s.status()).conversations.c).toEqual({ message_count: 1, query_count: 1 });
      expect(await s.deleteConversation('c')).toEqual({ messages: 1 });
      expect(await s.deleteConversation('c')).toBeUndefined();
      expect(await s.conversationIds()).toEqual([created.conversation.conversation_id]);
      expect(await s.deleteConversations()).toEqual({ conversations: 1, messages: 0 });
      await s.close();
    });

    it('feeds listeners in sequence order', async () => {
      const s = await make();
      const seen: number[] = [];
      s.onAppend((m) => seen.push(m.seq));
      await add(s, 'c', 'q', 'a', 'b');
      expect(seen).toEqual([1, 2]);
      await s.close();
    });
  });
}
