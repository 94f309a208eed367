import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../events/types.ts';
import type { StoredMessage } from '../messages/types.ts';
import type { SessionStore } from './types.ts';

let seq = 0;
export const fakeEvent = (
  reason: string,
  queryId: string,
  sessionId: string,
  eventType = 'Normal',
): StoredEvent => ({
  seq: ++seq,
  json: '{}',
  bytes: 0,
  expiresAt: Number.MAX_SAFE_INTEGER,
  queryId,
  sessionId,
  reason,
  eventType,
  timestamp: new Date().toISOString(),
  data: { queryId, sessionId },
});
const fakeMessage = (queryId: string, conversationId: string): StoredMessage => ({
  seq: ++seq,
  json: '{}',
  bytes: 0,
  expiresAt: Number.MAX_SAFE_INTEGER,
  queryId,
  conversationId,
});

export function sessionStoreContract(name: string, make: () => Promise<SessionStore>): void {
  describe(`SessionStore contract: ${name}`, () => {
    it('derives active / idle / error from the latest query', async () => {
      const s = await make();
      s.recordEvent(fakeEvent('QueryExecutionStart', 'q1', 'S'));
      expect((await s.get('S'))?.status).toBe('active');
      s.recordEvent(fakeEvent('QueryExecutionComplete', 'q1', 'S'));
      expect((await s.get('S'))?.status).toBe('idle');
      s.recordEvent(fakeEvent('QueryExecutionStart', 'q2', 'S'));
      s.recordEvent(fakeEvent('QueryExecutionError', 'q2', 'S', 'Warning'));
      expect((await s.get('S'))?.status).toBe('error');
      s.recordMessage(fakeMessage('q2', 'conv'));
      expect(await s.get('S')).toMatchObject({
        conversations: ['conv'],
        counts: { messages: 1, queries: 2 },
      });
      await s.close();
    });
    it('lists with statusCounts, filters, sorting, and cursor on sequence', async () => {
      const s = await make();
      s.recordEvent(fakeEvent('QueryExecutionStart', 'a', 'alpha'));
      s.recordEvent(fakeEvent('QueryExecutionStart', 'b', 'beta'));
      s.recordEvent(fakeEvent('QueryExecutionComplete', 'b', 'beta'));
      const page = await s.list({ filter: {}, limit: 10 });
      expect(page.items.map((v) => v.sessionId)).toEqual(['alpha', 'beta']);
      expect(page.statusCounts).toEqual({ active: 1, idle: 1, error: 0 });
      const active = await s.list({ filter: { status: 'active' }, limit: 10 });
      expect(active.items.map((v) => v.sessionId)).toEqual(['alpha']);
      expect(active.statusCounts).toEqual({ active: 1, idle: 1, error: 0 });
      const byName = await s.list({ filter: { sort: 'name', order: 'desc' }, limit: 1 });
      expect(byName).toMatchObject({ hasMore: true, items: [{ sessionId: 'beta' }] });
      const after = await s.list({ filter: {}, cursor: page.items[0]?.sequence, limit: 10 });
      expect(after.items.map((v) => v.sessionId)).toEqual(['beta']);
      expect(await s.purge()).toBe(2);
      s.recordEvent(fakeEvent('QueryExecutionStart', 'c', 'gamma'));
      expect((await s.get('gamma'))?.sequence).toBeGreaterThan(page.nextCursor);
      await s.close();
    });
  });
}
