import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openPgEventStore } from '../../pkg/broker/events/pg-store.ts';
import type { StoredMessage } from '../../pkg/broker/messages/types.ts';
import { openPgBackend } from '../../pkg/broker/pg/index.ts';
import { openPgSessionStore } from '../../pkg/broker/sessions/pg-store.ts';
import type { SessionView } from '../../pkg/broker/sessions/types.ts';
import { createLogger } from '../../pkg/log/index.ts';
import { eventually, killListen, TestDatabases } from './pg-harness.ts';

const dbs = new TestDatabases();
afterAll(() => dbs.dropAll());

/** One broker replica's event and session stores, wired like stores.ts wires them. */
async function replica(url: string, ttlSeconds = 3600) {
  const backend = await openPgBackend({
    url,
    logger: createLogger({ level: 'silent' }),
    feed: { pollMs: 600_000 },
  });
  const sessions = await openPgSessionStore(backend, { ttlSeconds });
  const events = await openPgEventStore(backend, { ttlSeconds, sessions });
  events.onAppend((e) => sessions.recordEvent(e));
  const changes: SessionView[] = [];
  sessions.onChange((_seq, view) => changes.push(view()));
  return {
    backend,
    sessions,
    events,
    changes,
    close: async () => {
      await events.close();
      await sessions.close();
      await backend.close();
    },
  };
}

const ev = (reason: string, queryId: string, sessionId: string) => ({
  eventType: (reason.endsWith('Error') ? 'Warning' : 'Normal') as 'Normal' | 'Warning',
  reason,
  message: '',
  data: { queryId, sessionId },
});
const msg = (queryId: string, conversationId: string): StoredMessage => ({
  seq: 0,
  json: '{}',
  bytes: 0,
  expiresAt: Number.MAX_SAFE_INTEGER,
  queryId,
  conversationId,
});

describe('PostgreSQL sessions across replicas', () => {
  it('rolls each event up once (on the writer), and B watches A’s changes in order across a killed LISTEN', async () => {
    const url = await dbs.fresh();
    const a = await replica(url);
    const b = await replica(url);
    try {
      for (let i = 0; i < 20; i++) {
        await a.events.append(ev('QueryExecutionStart', `q${i}`, `S${i % 4}`));
        await b.events.append(ev('QueryExecutionComplete', `q${i}`, `S${i % 4}`));
      }
      await killListen(url, b.backend);
      for (let i = 20; i < 30; i++) await a.events.append(ev('QueryExecutionStart', `q${i}`, `S${i % 4}`));
      await a.events.append(ev('QueryExecutionError', 'q29', 'S1'));

      const final = await a.sessions.list({ filter: {}, limit: 100 });
      // 50 writes on two replicas that both listen to every event: counted once each.
      const counts = Object.fromEntries(final.items.map((v) => [v.sessionId, v.counts.events]));
      expect(counts).toEqual({ S0: 13, S1: 14, S2: 12, S3: 12 });
      expect(final.statusCounts).toEqual({ active: 3, idle: 0, error: 1 });
      expect((await b.sessions.get('S1'))?.status).toBe('error');

      const top = Math.max(...final.items.map((v) => v.sequence));
      await eventually(
        () => b.changes.at(-1)?.sequence === top,
        10_000,
        "B's watcher to reach the last change",
      );
      const seqs = b.changes.map((v) => v.sequence);
      expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
      expect(new Set(seqs).size).toBe(seqs.length);
      // The last frame B got for each session is that session's current state.
      for (const v of final.items)
        expect(b.changes.filter((c) => c.sessionId === v.sessionId).at(-1)).toEqual(v);
      // B's own writes reached B's watcher without a gap before the kill (one change each).
      expect(b.changes.length).toBeGreaterThanOrEqual(40);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('attributes messages to the session learned from events on another replica', async () => {
    const url = await dbs.fresh();
    const a = await replica(url);
    const b = await replica(url);
    try {
      await a.events.append(ev('QueryExecutionStart', 'qm', 'SM'));
      // A memory message store on B hands its local messages to recordMessage (stores.ts wiring).
      b.sessions.recordMessage(msg('qm', 'conv-1'));
      b.sessions.recordMessage(msg('qm', 'conv-2'));
      b.sessions.recordMessage(msg('unknown-query', 'conv-3'));
      const s = await b.sessions.get('SM');
      expect(s).toMatchObject({
        counts: { messages: 2, events: 1, conversations: 2 },
        conversations: ['conv-1', 'conv-2'],
      });
      expect((await a.sessions.get('unknown-query'))?.counts.messages).toBe(1);
      // Explicit sessions: created once, renamed (200) by another replica.
      expect((await a.sessions.create({ sessionId: 'X', name: 'first' })).created).toBe(true);
      const renamed = await b.sessions.create({ sessionId: 'X', name: 'second' });
      expect(renamed).toMatchObject({ created: false, session: { name: 'second' } });
      expect((await a.sessions.create({ sessionId: 'X' })).session.name).toBe('second');
      expect(
        (await a.sessions.list({ filter: { search: 'SECO' }, limit: 10 })).items.map((v) => v.sessionId),
      ).toEqual(['X']);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('hides a session whose sliding TTL passed without deleting it; new activity brings it back', async () => {
    const url = await dbs.fresh();
    const a = await replica(url, 2);
    try {
      await a.events.append(ev('QueryExecutionStart', 'qt', 'T'));
      await new Promise((r) => setTimeout(r, 1200));
      await a.events.append(ev('QueryExecutionComplete', 'qt', 'T'));
      await new Promise((r) => setTimeout(r, 1200));
      // 2.4 s after the first event (TTL 2 s) but 1.2 s after the second: the TTL slid.
      expect((await a.sessions.get('T'))?.status).toBe('idle');
      await new Promise((r) => setTimeout(r, 1000));
      expect(await a.sessions.get('T')).toBeUndefined();
      const listed = await a.sessions.list({ filter: {}, limit: 10 });
      expect(listed).toMatchObject({ total: 0, items: [], statusCounts: { active: 0, idle: 0, error: 0 } });
      expect(await a.sessions.changes({}, 0, 10)).toEqual([]);
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      expect(
        (await c.query("SELECT count(*)::int AS n FROM berth_sessions WHERE session_id = 'T'")).rows[0].n,
      ).toBe(1);
      await c.end();
      a.sessions.recordMessage(msg('qt', 'conv'));
      expect(await a.sessions.get('T')).toMatchObject({ counts: { events: 2, messages: 1, queries: 1 } });
    } finally {
      await a.close();
    }
  });
});
