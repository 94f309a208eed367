import { afterAll, describe, expect, it } from 'vitest';
import { createBrokerApp } from '../../pkg/broker/app.ts';
import { brokerConfig } from '../../pkg/broker/config.ts';
import type { BrokerStores } from '../../pkg/broker/deps.ts';
import { openPgEventStore } from '../../pkg/broker/events/pg-store.ts';
import type { StoredEvent } from '../../pkg/broker/events/types.ts';
import { openPgBackend } from '../../pkg/broker/pg/index.ts';
import { openPgSessionStore } from '../../pkg/broker/sessions/pg-store.ts';
import { SseHub } from '../../pkg/http/index.ts';
import { createLogger } from '../../pkg/log/index.ts';
import { OwnPostgres } from './pg-harness.ts';

const servers: OwnPostgres[] = [];
afterAll(async () => {
  for (const s of servers) await s.destroy();
});

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('events and sessions on PostgreSQL through an outage (a server of the test, stopped and restarted)', () => {
  it('answers 503 with Retry-After while PostgreSQL is down, recovers on its own, loses nothing acknowledged', async () => {
    const server = await OwnPostgres.create();
    servers.push(server);
    const logger = createLogger({ level: 'silent' });
    const backend = await openPgBackend({
      url: server.url,
      logger,
      migrate: true,
      feed: { pollMs: 600_000 },
    });
    const sessions = await openPgSessionStore(backend, { ttlSeconds: 3600 });
    const events = await openPgEventStore(backend, { ttlSeconds: 3600, sessions });
    const live: number[] = [];
    events.onAppend((e) => live.push(e.seq));
    const hub = new SseHub({ heartbeatMs: 60_000, flushMs: 0 });
    const config = brokerConfig();
    const app = createBrokerApp({
      config,
      logger,
      hub,
      stores: { events, sessions } as unknown as BrokerStores,
    });
    const postEvent = (i: number) =>
      app.request('/events', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          reason: 'ToolCallStart',
          message: `#${i}`,
          data: { queryId: 'qo', sessionId: 'SO' },
        }),
      });

    const acked: string[] = [];
    const statuses = new Map<number, number>();
    const retryAfter = new Set<string | null>();
    let stop = false;
    const writer = (async () => {
      for (let i = 0; !stop; i++) {
        const res = await postEvent(i);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status === 201) acked.push((await res.json()).message);
        else {
          retryAfter.add(res.headers.get('retry-after'));
          await res.text();
        }
        await wait(5);
      }
    })();
    try {
      await wait(300);
      await server.stop();
      const downAt = Date.now();
      await wait(500);
      for (const path of ['/events', '/events/qo', '/sessions', '/sessions/SO']) {
        const res = await app.request(path);
        expect(res.status, path).toBe(503);
        expect(res.headers.get('retry-after'), path).toBe('2');
        const body = await res.json();
        expect(body.error).toMatchObject({ code: 'storage_unavailable' });
        expect(body.error.message).toContain('postgres is unavailable');
      }
      const during = await postEvent(-1);
      expect(during.status).toBe(503);
      expect((await during.json()).error.message).not.toMatch(/\n\s+at /);
      await server.start();
      const upAfterMs = Date.now() - downAt;
      // Recovery on its own: the writer's requests succeed again without any restart of ours.
      const before = acked.length;
      for (const until = Date.now() + 15_000; acked.length < before + 20 && Date.now() < until; )
        await wait(50);
      stop = true;
      await writer;
      expect(acked.length).toBeGreaterThan(before + 19);
      expect([...statuses.keys()].sort()).toEqual([201, 503]);
      expect([...retryAfter]).toEqual(['2']);

      // Every acknowledged event is stored, once; the session counted exactly the stored ones.
      const listed = await (await app.request('/events/qo?limit=1000')).json();
      const stored = listed.items.map((e: { message: string }) => e.message);
      for (const m of acked) expect(stored).toContain(m);
      const session = await (await app.request('/sessions/SO')).json();
      expect(session.counts.events).toBe(listed.total);
      // The feed caught up after the outage: this replica's listeners saw every stored event in order.
      const seqs = listed.items.map((e: { sequence: number }) => e.sequence);
      for (const until = Date.now() + 10_000; live.at(-1) !== seqs.at(-1) && Date.now() < until; )
        await wait(50);
      expect(live.filter((s) => seqs.includes(s))).toEqual(seqs);
      expect(upAfterMs).toBeGreaterThan(0);
    } finally {
      stop = true;
      await writer;
      hub.stop();
      await events.close();
      await sessions.close();
      await backend.close();
    }
  });

  it('keeps session roll-ups handed over during an outage (memory events → PostgreSQL sessions) and writes them after', async () => {
    const server = await OwnPostgres.create();
    servers.push(server);
    const logger = createLogger({ level: 'silent' });
    const backend = await openPgBackend({ url: server.url, logger, migrate: true });
    const sessions = await openPgSessionStore(backend, { ttlSeconds: 3600 });
    const event = (i: number): StoredEvent => ({
      seq: i,
      json: '{}',
      bytes: 0,
      expiresAt: 0,
      queryId: `q${i}`,
      sessionId: 'Q',
      reason: 'QueryExecutionStart',
      eventType: 'Normal',
      timestamp: new Date().toISOString(),
      data: { queryId: `q${i}`, sessionId: 'Q' },
    });
    try {
      for (let i = 0; i < 5; i++) sessions.recordEvent(event(i));
      expect((await sessions.get('Q'))?.counts.events).toBe(5);
      await server.stop();
      // What stores.ts hands over (a memory event store's append listener) while PostgreSQL is down.
      for (let i = 5; i < 10; i++) sessions.recordEvent(event(i));
      const down = await sessions.get('Q').then(
        () => undefined,
        (err: { status?: number; headers?: Record<string, string> }) => err,
      );
      expect(down).toMatchObject({ status: 503, headers: { 'retry-after': '2' } });
      await server.start();
      let view = await sessions.get('Q').catch(() => undefined);
      for (const until = Date.now() + 15_000; view?.counts.events !== 10 && Date.now() < until; ) {
        await wait(100);
        view = await sessions.get('Q').catch(() => undefined);
      }
      expect(view).toMatchObject({ counts: { events: 10, queries: 10 }, status: 'active' });
    } finally {
      await sessions.close();
      await backend.close();
    }
  });
});
