import { afterAll, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../pkg/broker/events/types.ts';
import { inTransaction, openPgBackend } from '../../pkg/broker/pg/index.ts';
import { applyRollup } from '../../pkg/broker/sessions/pg-rollup.ts';
import { openPgSessionStore } from '../../pkg/broker/sessions/pg-store.ts';
import { fakeEvent, fakeMessage, sessionStoreContract } from '../../pkg/broker/sessions/store.contract.ts';
import { createLogger } from '../../pkg/log/index.ts';
import { eventually } from '../support/wait.ts';
import { TestDatabases } from './pg-harness.ts';

const dbs = new TestDatabases();
afterAll(() => dbs.dropAll());
const logger = createLogger({ level: 'silent' });

sessionStoreContract('postgres', async () => {
  const backend = await openPgBackend({ url: await dbs.fresh(), logger });
  return openPgSessionStore(backend, { ttlSeconds: 3600, onClose: () => backend.close() });
});

const event = (reason: string, queryId: string, sessionId: string): StoredEvent => ({
  seq: 0,
  json: '{}',
  bytes: 0,
  expiresAt: 0,
  queryId,
  sessionId,
  reason,
  eventType: reason.endsWith('Error') ? 'Warning' : 'Normal',
  timestamp: new Date().toISOString(),
  data: { queryId, sessionId },
});

describe('PostgreSQL session counters (total and statusCounts without a scan)', () => {
  it('match an exact count through status changes, TTL hiding, the reaper, revival, renames and purge', async () => {
    const backend = await openPgBackend({ url: await dbs.fresh(), logger });
    const long = await openPgSessionStore(backend, { ttlSeconds: 3600 });
    const short = await openPgSessionStore(backend, { ttlSeconds: 2 });
    const fast = async () => (await long.list({ filter: {}, limit: 1 })).statusCounts;
    // A date filter that keeps everything takes the aggregate path: the exact answer.
    const exact = async () =>
      (await long.list({ filter: { dateFrom: '1970-01-01T00:00:00Z' }, limit: 1 })).statusCounts;
    const same = async (expected: { active: number; idle: number; error: number }) => {
      expect(await exact()).toEqual(expected);
      expect(await fast()).toEqual(expected);
      const all = await long.list({ filter: {}, limit: 1000 });
      expect(all.total).toBe(expected.active + expected.idle + expected.error);
      expect((await long.list({ filter: { status: 'error' }, limit: 1 })).total).toBe(expected.error);
    };
    try {
      for (let i = 0; i < 6; i++) long.recordEvent(event('QueryExecutionStart', `l${i}`, `L${i}`));
      for (let i = 0; i < 3; i++) long.recordEvent(event('QueryExecutionComplete', `l${i}`, `L${i}`));
      long.recordEvent(event('QueryExecutionError', 'l5', 'L5'));
      for (let i = 0; i < 4; i++) short.recordEvent(event('QueryExecutionStart', `t${i}`, `T${i}`));
      // A store's reads wait for its own queued roll-ups; `long` reads, so wait for `short`'s here.
      await short.get('T3');
      await same({ active: 6, idle: 3, error: 1 });

      await new Promise((r) => setTimeout(r, 2100));
      await same({ active: 2, idle: 3, error: 1 });
      await backend.reaper.runOnce();
      const hidden = await backend.database.pool.query(
        'SELECT count(*)::int AS n FROM berth_sessions WHERE hidden',
      );
      expect(hidden.rows[0].n).toBe(4);
      await same({ active: 2, idle: 3, error: 1 });
      // New activity brings a hidden session back (with its history); a rename does not.
      long.recordEvent(event('QueryExecutionComplete', 't0', 'T0'));
      await long.create({ sessionId: 'T1', name: 'renamed while hidden' });
      await long.create({ sessionId: 'NEW' });
      await same({ active: 2, idle: 5, error: 1 });
      expect((await long.get('T0'))?.counts.events).toBe(2);
      expect(await long.get('T1')).toBeUndefined();

      expect(await long.purge()).toBe(11);
      await same({ active: 0, idle: 0, error: 0 });
      long.recordEvent(event('QueryExecutionStart', 'x', 'X'));
      await same({ active: 1, idle: 0, error: 0 });
    } finally {
      await long.close();
      await short.close();
      await backend.close();
    }
  });
});

describe('PostgreSQL sessions: a message racing its query’s first event', () => {
  it('follows the mapping committed while it waited for the stand-in’s lock, and the stand-in goes', async () => {
    const backend = await openPgBackend({ url: await dbs.fresh(), logger });
    const store = await openPgSessionStore(backend, { ttlSeconds: 3600, onClose: () => backend.close() });
    const pool = backend.database.pool;
    store.recordMessage(fakeMessage('q', 'c0'));
    expect(await store.get('q')).toMatchObject({ counts: { messages: 1 } });
    // The event's transaction maps q → S and absorbs the stand-in, but has not committed yet.
    const ev = await pool.connect();
    await ev.query('BEGIN');
    await applyRollup(ev, { kind: 'events', items: [fakeEvent('QueryExecutionStart', 'q', 'S')] }, 3600);
    // A message of q reads no mapping yet, then waits for the stand-in's lock.
    const message = inTransaction(pool, (c) =>
      applyRollup(
        c,
        { kind: 'messages', items: [fakeMessage('q', 'c1')], at: new Date().toISOString() },
        3600,
      ),
    );
    await eventually(async () => {
      const r = await pool.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
      );
      return r.rows[0].n > 0;
    });
    await ev.query('COMMIT');
    ev.release();
    await message;
    expect(await store.get('S')).toMatchObject({
      conversations: ['c0', 'c1'],
      counts: { messages: 2, events: 1, queries: 1 },
    });
    expect(await store.get('q')).toBeUndefined();
    expect((await store.list({ filter: {}, limit: 10 })).statusCounts).toEqual({
      active: 1,
      idle: 0,
      error: 0,
    });
    await store.close();
  });
});
