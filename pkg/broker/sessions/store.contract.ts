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
export const fakeMessage = (queryId: string, conversationId: string): StoredMessage => ({
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
    it('moves messages written before their query’s first event into the session it names', async () => {
      const s = await make();
      // A fast query: its memory write reaches the broker before its events do.
      s.recordMessage(fakeMessage('fast', 'conv-fast'));
      s.recordMessage(fakeMessage('fast', 'conv-fast'));
      expect(await s.get('fast')).toMatchObject({ conversations: ['conv-fast'], counts: { messages: 2 } });
      s.recordEvent(fakeEvent('QueryExecutionStart', 'slow', 'S'));
      s.recordMessage(fakeMessage('slow', 'conv-slow'));
      s.recordEvent(fakeEvent('QueryExecutionStart', 'fast', 'S'));
      s.recordEvent(fakeEvent('QueryExecutionComplete', 'fast', 'S'));
      expect(await s.get('S')).toMatchObject({
        conversations: ['conv-slow', 'conv-fast'],
        counts: { messages: 3, queries: 2, events: 3, conversations: 2 },
      });
      // The stand-in is gone: not readable, not listed, not counted.
      expect(await s.get('fast')).toBeUndefined();
      const page = await s.list({ filter: {}, limit: 10 });
      expect(page.items.map((v) => v.sessionId)).toEqual(['S']);
      expect(page.statusCounts).toEqual({ active: 1, idle: 0, error: 0 });
      // Later messages of that query go to its session.
      s.recordMessage(fakeMessage('fast', 'conv-fast'));
      expect(await s.get('S')).toMatchObject({ counts: { messages: 4 } });
      expect(await s.get('fast')).toBeUndefined();
      await s.close();
    });
    it('leaves a session of that name alone when it is more than one query’s early messages', async () => {
      const s = await make();
      await s.create({ sessionId: 'q1', name: 'named by a user' });
      s.recordMessage(fakeMessage('q1', 'c1'));
      s.recordMessage(fakeMessage('q2', 'c2'));
      s.recordMessage(fakeMessage('q3', 'c3'));
      s.recordEvent(fakeEvent('QueryExecutionStart', 'q3', 'q2'));
      s.recordEvent(fakeEvent('QueryExecutionStart', 'q1', 'S'));
      s.recordEvent(fakeEvent('QueryExecutionStart', 'q2', 'S'));
      // q1's session was created by name; q2's stand-in took q3's messages (q3 named it): both stay.
      expect(await s.get('q1')).toMatchObject({ name: 'named by a user', counts: { messages: 1 } });
      expect(await s.get('q2')).toMatchObject({ counts: { messages: 2, events: 1 } });
      expect(await s.get('S')).toMatchObject({ counts: { messages: 0, events: 2 } });
      await s.close();
    });
  });
}
