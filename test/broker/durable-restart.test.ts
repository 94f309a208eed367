import { afterAll, describe, expect, it } from 'vitest';
import { type Spawned, spawnBerth } from '../support/process.ts';
import { collect, eventually, json, post } from './harness.ts';
import { TestDatabases } from './pg-harness.ts';
import { dropPrefix, sharedRedisUrl, uniquePrefix } from './redis-support.ts';

/**
 * Issue 11's acceptance on real processes: with the four backend variables set, `berth migrate`
 * then `berth broker` keeps everything across `kill -9` and a restart, and a second replica serves
 * the same data — messages, conversations, events, sessions and chunks — and live streams.
 */
const dbs = new TestDatabases();
const procs: Spawned[] = [];
const prefix = uniquePrefix();
afterAll(async () => {
  for (const p of procs) p.proc.kill('SIGKILL');
  await dbs.dropAll();
  await dropPrefix(sharedRedisUrl(), prefix);
});

const env = (databaseUrl: string) => ({
  ...process.env,
  LOG_LEVEL: 'info',
  MESSAGE_BACKEND: 'postgres',
  EVENT_BACKEND: 'postgres',
  SESSIONS_BACKEND: 'postgres',
  CHUNK_BACKEND: 'redis',
  DATABASE_URL: databaseUrl,
  REDIS_URL: sharedRedisUrl(),
  REDIS_KEY_PREFIX: prefix,
});

async function broker(databaseUrl: string, port = 0) {
  const p = spawnBerth(['broker', '--port', String(port)], env(databaseUrl));
  procs.push(p);
  const line = await p.waitForLine(/"msg":"broker listening"/, 30_000);
  const listening = JSON.parse(line) as { port: number };
  return { p, port: listening.port, url: `http://127.0.0.1:${listening.port}` };
}

/** Everything a reader sees of the five domains, for comparing two moments or two replicas. */
async function snapshot(url: string) {
  const [messages, conversations, events, sessions, chunks] = await Promise.all([
    json(fetch(`${url}/messages?limit=1000`)),
    json(fetch(`${url}/conversations?limit=100`)),
    json(fetch(`${url}/events?limit=1000`)),
    json(fetch(`${url}/sessions?limit=100`)),
    json(fetch(`${url}/stream?limit=1000`)),
  ]);
  return {
    messages: messages.items.map((m: any) => [m.sequence, m.message.content]),
    conversations: conversations.items.map((c: any) => c.conversation_id).sort(),
    events: events.items.map((e: any) => [e.sequence ?? e.seq, e.reason, e.data?.queryId]),
    sessions: sessions.items.map((s: any) => [s.sessionId, s.counts?.events]).sort(),
    chunks: chunks.items.map((c: any) => [c.sequence, JSON.stringify(c.chunk ?? c.data ?? c)]),
  };
}

describe('durable broker: kill -9, restart, second replica', () => {
  it('keeps every acknowledged write of every domain and serves it from both replicas', async () => {
    const db = await dbs.empty();
    const migrate = spawnBerth(['migrate'], env(db));
    procs.push(migrate);
    expect(await migrate.exited, migrate.output()).toBe(0);

    const a = await broker(db);
    for (let i = 0; i < 3; i++) {
      const q = `q-${i}`;
      expect(
        (
          await post(`${a.url}/messages`, {
            conversation_id: `conv-${i}`,
            query_id: q,
            messages: [
              { role: 'user', content: `question ${i}` },
              { role: 'assistant', content: `answer ${i}` },
            ],
          })
        ).status,
      ).toBe(201);
      expect(
        (
          await post(`${a.url}/events`, {
            reason: 'QueryExecutionStart',
            data: { queryId: q, queryName: q, sessionId: `session-${i % 2}` },
          })
        ).status,
      ).toBeLessThan(300);
      for (let c = 0; c < 3; c++)
        expect(
          (await post(`${a.url}/stream/${q}`, { choices: [{ delta: { content: `${q} token ${c}` } }] }))
            .status,
        ).toBeLessThan(300);
      expect((await post(`${a.url}/stream/${q}/complete`, {})).status).toBeLessThan(300);
    }
    const before = await snapshot(a.url);
    expect(before.messages).toHaveLength(6);
    expect(before.conversations).toEqual(['conv-0', 'conv-1', 'conv-2']);
    expect(before.events.map((e: unknown[]) => e.slice(1))).toEqual([
      ['QueryExecutionStart', 'q-0'],
      ['QueryExecutionStart', 'q-1'],
      ['QueryExecutionStart', 'q-2'],
    ]);
    expect(before.messages.map((m: unknown[]) => m[1])).toContain('answer 2');
    expect(before.sessions.map((s: unknown[]) => s[0])).toEqual(
      expect.arrayContaining(['session-0', 'session-1']),
    );
    expect(before.chunks.length).toBeGreaterThanOrEqual(9);

    a.p.proc.kill('SIGKILL');
    expect(await a.p.exited).not.toBe(0);
    const restarted = await broker(db, a.port);
    expect(await snapshot(restarted.url)).toEqual(before);

    const b = await broker(db);
    expect(await snapshot(b.url)).toEqual(before);
    // Live streams across replicas: a watcher on B sees what is written on the restarted A.
    const onB = collect(`${b.url}/messages?watch=true`);
    await eventually(async () => (await json(fetch(`${b.url}/readyz`))).sse.subscribers >= 1);
    expect(
      (
        await post(`${restarted.url}/messages`, {
          conversation_id: 'conv-after',
          query_id: 'q-after',
          messages: [{ role: 'user', content: 'after the restart' }],
        })
      ).status,
    ).toBe(201);
    await onB.until(1, 10_000);
    expect(JSON.parse(onB.data[0] as string).message.content).toBe('after the restart');
  });
});
