import { describe, expect, it } from 'vitest';
import type { EventStore } from './types.ts';

export function eventStoreContract(name: string, make: () => Promise<EventStore>): void {
  const ev = (queryId: string, sessionId?: string) => ({
    eventType: 'Normal' as const,
    reason: 'QueryExecutionStart',
    message: '',
    data: { queryId, ...(sessionId ? { sessionId } : {}) },
  });
  describe(`EventStore contract: ${name}`, () => {
    it('filters by query and by session (session defaults to the query id), pages by cursor', async () => {
      const s = await make();
      await s.append(ev('q1', 's'));
      await s.append(ev('q2', 's'));
      await s.append(ev('q3'));
      expect((await s.page({ sessionId: 's' }, 0, 10)).items.map((e) => e.seq)).toEqual([1, 2]);
      expect((await s.page({ sessionId: 'q3' }, 0, 10)).total).toBe(1);
      expect((await s.page({ queryId: 'q2' }, 0, 10)).items.map((e) => e.queryId)).toEqual(['q2']);
      expect((await s.page({}, 1, 1)).items.map((e) => e.seq)).toEqual([2]);
      await s.close();
    });
    it('stores a batch in order with consecutive sequences', async () => {
      const s = await make();
      await s.append(ev('q0'));
      const batch = await s.appendMany([ev('q1', 'b'), ev('q2', 'b'), ev('q3', 'b')]);
      expect(batch.map((e) => e.queryId)).toEqual(['q1', 'q2', 'q3']);
      expect(batch.map((e) => e.seq)).toEqual([2, 3, 4]);
      expect((await s.page({ sessionId: 'b' }, 0, 10)).items.map((e) => e.seq)).toEqual([2, 3, 4]);
      await s.close();
    });
    it('deletes one query or all, never reusing sequences', async () => {
      const s = await make();
      await s.append(ev('q1'));
      await s.append(ev('q2'));
      expect(await s.delete('q1')).toBe(1);
      expect(await s.delete()).toBe(1);
      expect((await s.append(ev('q3'))).seq).toBe(3);
      await s.close();
    });
    it("deletes one namespace's query only, leaving the same-named query of another namespace", async () => {
      const s = await make();
      const inNs = (namespace: string) => ({
        ...ev('support-1'),
        data: { queryId: 'support-1', queryNamespace: namespace },
      });
      await s.appendMany([inNs('team-a'), inNs('team-b'), inNs('team-a'), ev('support-1')]);
      expect(await s.delete('support-1', 'team-a')).toBe(2);
      const left = await s.page({ queryId: 'support-1' }, 0, 10);
      expect(left.items.map((e) => e.data.queryNamespace ?? null)).toEqual(['team-b', null]);
      expect(left.total).toBe(2);
      expect(await s.delete('support-1', 'team-a')).toBe(0);
      expect(await s.delete('support-1')).toBe(2);
      await s.close();
    });
  });
}
