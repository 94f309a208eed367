import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openPgEventStore } from '../../pkg/broker/events/pg-store.ts';
import type { StoredEvent } from '../../pkg/broker/events/types.ts';
import { openPgBackend } from '../../pkg/broker/pg/index.ts';
import { createLogger } from '../../pkg/log/index.ts';
import { recordingLogger } from '../support/logs.ts';
import { collect, post, startTestBroker } from './harness.ts';
import { eventually, killListen, TestDatabases } from './pg-harness.ts';

const dbs = new TestDatabases();
afterAll(() => dbs.dropAll());

// Polling is pushed far out: what the test proves is delivery by NOTIFY and by the catch-up read
// after the LISTEN connection comes back, not by the feed's insurance poll.
const replica = (url: string, logger = createLogger({ level: 'silent' })) =>
  openPgBackend({ url, logger, feed: { pollMs: 600_000 } });

const ev = (i: number) => ({
  eventType: 'Normal' as const,
  reason: 'ToolCallStart',
  message: `#${i}`,
  data: { queryId: `q${i % 3}`, sessionId: 'S' },
});

describe('PostgreSQL events across replicas', () => {
  it("delivers A's events to B's listeners in order, without gaps, also across a killed LISTEN connection", async () => {
    const url = await dbs.fresh();
    const ba = await replica(url);
    const rec = recordingLogger();
    const bb = await replica(url, rec.logger);
    const a = await openPgEventStore(ba, { ttlSeconds: 3600 });
    const b = await openPgEventStore(bb, { ttlSeconds: 3600 });
    const seen: StoredEvent[] = [];
    b.onAppend((e) => seen.push(e));
    try {
      let n = 0;
      // Singles and batches, some concurrently, so commits land out of sequence order.
      await Promise.all([
        (async () => {
          for (let i = 0; i < 40; i++) await a.append(ev(n++));
        })(),
        (async () => {
          for (let i = 0; i < 10; i++) await a.appendMany([ev(n++), ev(n++), ev(n++)]);
        })(),
      ]);
      await eventually(() => seen.length >= 70, 10_000, 'the first 70 events on B');

      await killListen(url, bb);
      // Written while B's LISTEN connection is down: no notification reaches B for these.
      for (let i = 0; i < 30; i++) await a.append(ev(n++));
      await eventually(() => seen.length >= 100, 10_000, 'the 30 events written during the drop');
      await eventually(() => rec.lines.some((l) => l.includes('LISTEN connection restored')), 5000);
      // And notifications flow again after the reconnect.
      await a.append(ev(n++));
      await eventually(() => seen.length >= 101, 5000, 'an event after the reconnect');

      expect(seen.map((e) => e.seq)).toEqual(Array.from({ length: 101 }, (_, i) => i + 1));
      expect(seen.at(-1)?.data).toMatchObject({ queryId: `q${100 % 3}`, sessionId: 'S' });
      expect(b.head()).toBe(101);
      expect(rec.lines.some((l) => l.includes('LISTEN connection lost'))).toBe(true);
    } finally {
      await a.close();
      await b.close();
      await ba.close();
      await bb.close();
    }
  });

  it('answers a live-only watcher from head(): a fresh replica starts after what is committed', async () => {
    const url = await dbs.fresh();
    const ba = await replica(url);
    const a = await openPgEventStore(ba, { ttlSeconds: 3600 });
    await a.appendMany([ev(0), ev(1)]);
    const bb = await replica(url);
    const b = await openPgEventStore(bb, { ttlSeconds: 3600 });
    const seen: number[] = [];
    b.onAppend((e) => seen.push(e.seq));
    try {
      expect(b.head()).toBe(2);
      await a.append(ev(2));
      await eventually(() => seen.length === 1);
      expect(seen).toEqual([3]);
    } finally {
      await a.close();
      await b.close();
      await ba.close();
      await bb.close();
    }
  });

  it('two brokers: EventSource watchers on B get the events and sessions written through A, across killed LISTENs', async () => {
    const url = await dbs.fresh();
    const backends = { messages: 'memory', events: 'postgres', sessions: 'postgres', chunks: 'memory' };
    const a = await startTestBroker({ backends, databaseUrl: url });
    const b = await startTestBroker({ backends, databaseUrl: url });
    const events = collect(`${b.url}/events?watch=true`);
    const sessions = collect(`${b.url}/sessions?watch=true`);
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      await new Promise((r) => setTimeout(r, 300));
      const send = async (from: number, n: number) => {
        const batch = Array.from({ length: n }, (_, i) => ({
          reason: i % 2 ? 'QueryExecutionComplete' : 'QueryExecutionStart',
          data: { queryId: `q${from + i}`, sessionId: `S${(from + i) % 3}` },
        }));
        expect((await post(`${a.url}/events`, batch.slice(0, 1))).status).toBe(201);
        expect((await post(`${a.url}/events`, batch.slice(1))).status).toBe(201);
      };
      await send(0, 20);
      await events.until(20);
      // Every LISTEN connection of both brokers dropped (as a network cut would); writes go on.
      const killed = await c.query(
        `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND application_name = 'berth-broker-listen'`,
      );
      expect(killed.rows[0].n).toBe(2);
      await send(20, 20);
      await events.until(40);
      expect(events.ids).toEqual(Array.from({ length: 40 }, (_, i) => String(i + 1)));
      expect(events.data.map((d) => JSON.parse(d).data.queryId)).toEqual(
        Array.from({ length: 40 }, (_, i) => `q${i}`),
      );

      const final = await (await fetch(`${b.url}/sessions`)).json();
      const top = Math.max(...final.items.map((v: { sequence: number }) => v.sequence));
      for (const until = Date.now() + 10_000; Number(sessions.ids.at(-1)) !== top && Date.now() < until; )
        await new Promise((r) => setTimeout(r, 20));
      const ids = sessions.ids.map(Number);
      expect(ids).toEqual([...ids].sort((x, y) => x - y));
      const lastOf = new Map(sessions.data.map((d) => [JSON.parse(d).sessionId, JSON.parse(d)]));
      for (const v of final.items) expect(lastOf.get(v.sessionId)).toEqual(v);
      expect(final.items.map((v: { counts: { events: number } }) => v.counts.events).sort()).toEqual([
        13, 13, 14,
      ]);
    } finally {
      events.close();
      sessions.close();
      await c.end();
      await a.close();
      await b.close();
    }
  });
});
