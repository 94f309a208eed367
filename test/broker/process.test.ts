import { appendFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnBerth } from '../support/process.ts';
import { json, post } from './harness.ts';

const dir = mkdtempSync(join(tmpdir(), 'berth-broker-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function start(env: NodeJS.ProcessEnv = {}) {
  const p = spawnBerth(['broker', '--port', '0'], { ...process.env, LOG_LEVEL: 'info', ...env });
  const line = await p.waitForLine(/"msg":"broker listening"/, 30_000);
  const port = (JSON.parse(line) as { port: number }).port;
  return { p, url: `http://127.0.0.1:${port}` };
}

describe('berth broker (a real process)', () => {
  it('starts with no configuration, logs its port, and stops on SIGTERM', async () => {
    const { p, url } = await start();
    expect(await json(fetch(`${url}/readyz`))).toMatchObject({ status: 'ready' });
    expect((await fetch(`${url}/api-docs`)).headers.get('content-type')).toMatch(/text\/html/);
    expect((await fetch(`${url}/api-docs/assets/swagger-ui-bundle.js`)).status).toBe(200);
    const spec = await json(fetch(`${url}/openapi.json`));
    expect(Object.keys(spec.paths)).toEqual(
      expect.arrayContaining([
        '/messages',
        '/stream/{query}',
        '/v1/traces',
        '/traces/{traceId}',
        '/events/{queryId}',
        '/sessions',
      ]),
    );
    p.proc.kill('SIGTERM');
    expect(await p.exited).toBe(0);
  });

  it('refuses invalid configuration, naming the variable', async () => {
    for (const [env, needle] of [
      [{ PORT: 'eighty' }, '--port'],
      [{ MESSAGE_BACKEND: 'postgres' }, 'DATABASE_URL'],
      [{ BODY_LIMIT_BYTES: '-1' }, 'BODY_LIMIT_BYTES'],
    ] as const) {
      const p = spawnBerth(['broker'], { ...process.env, ...env });
      expect(await p.exited).not.toBe(0);
      expect(p.output()).toContain(needle);
    }
    // A PostgreSQL backend that cannot be opened: one clear line naming the database (no password).
    const pg = spawnBerth(['broker'], {
      ...process.env,
      EVENT_BACKEND: 'postgres',
      DATABASE_URL: 'postgres://x:hunter2@127.0.0.1/db',
    });
    expect(await pg.exited).not.toBe(0);
    expect(pg.output()).toContain('berth broker: PostgreSQL postgres://x@127.0.0.1/db:');
    expect(pg.output()).not.toContain('hunter2');
  });

  it('persists to files: survives kill -9 (torn last line ignored) and never reuses a sequence', async () => {
    const env = { BROKER_PERSIST_DIR: dir, BROKER_PERSIST_FLUSH_MS: '10' };
    const first = await start(env);
    for (let i = 0; i < 20; i++)
      await post(`${first.url}/messages`, {
        conversation_id: 'p',
        query_id: 'q',
        messages: [{ role: 'user', content: `m${i}` }],
      });
    await post(`${first.url}/events`, {
      eventType: 'Normal',
      reason: 'QueryExecutionStart',
      message: '',
      data: { queryId: 'q', sessionId: 'ps' },
    });
    await post(`${first.url}/stream/q`, [{ choices: [{ delta: { content: 'kept' } }] }]);
    await fetch(`${first.url}/messages`, { method: 'DELETE' });
    await post(`${first.url}/messages`, {
      conversation_id: 'p',
      query_id: 'q',
      messages: [{ role: 'user', content: 'last' }],
    });
    // Let the 10 ms flush happen, then crash without any shutdown.
    await new Promise((r) => setTimeout(r, 200));
    first.p.proc.kill('SIGKILL');
    await first.p.exited;
    expect(readdirSync(dir).sort()).toEqual([
      'chunks.jsonl',
      'events.jsonl',
      'messages.jsonl',
      'sessions.jsonl',
      'spans.jsonl',
    ]);
    appendFileSync(join(dir, 'messages.jsonl'), '{"x":1,"r":{"sequence":999,"conv');

    const second = await start(env);
    const msgs = await json(fetch(`${second.url}/messages?cursor=0`));
    expect(msgs.items.map((m: any) => m.message.content)).toEqual(['last']);
    expect(msgs.items[0].sequence).toBe(21);
    await post(`${second.url}/messages`, {
      conversation_id: 'p',
      query_id: 'q',
      messages: [{ role: 'user', content: 'new' }],
    });
    expect((await json(fetch(`${second.url}/messages?cursor=21`))).items[0].sequence).toBe(22);
    expect((await json(fetch(`${second.url}/events/q`))).total).toBe(1);
    expect((await json(fetch(`${second.url}/sessions/ps`))).status).toBe('active');
    const stream = await json(fetch(`${second.url}/stream?query=q`));
    expect(stream.items[0].chunk.choices[0].delta.content).toBe('kept');
    second.p.proc.kill('SIGTERM');
    expect(await second.p.exited).toBe(0);
  });
});
