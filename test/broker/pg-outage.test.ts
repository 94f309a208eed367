import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brokerConfig } from '../../pkg/broker/config.ts';
import { migrate } from '../../pkg/broker/pg/index.ts';
import { type RunningBroker, startBroker } from '../../pkg/broker/server.ts';
import { createLogger } from '../../pkg/log/index.ts';
import { collect, eventually, json, post } from './harness.ts';
import { OwnPostgres, withDatabase } from './pg-harness.ts';

let own: OwnPostgres;
let b: RunningBroker;

beforeAll(async () => {
  own = await OwnPostgres.create();
  const admin = new pg.Client({ connectionString: own.url });
  await admin.connect();
  await admin.query('CREATE DATABASE berth');
  await admin.end();
  const url = withDatabase(own.url, 'berth');
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  await migrate(pool);
  await pool.end();
  const base = brokerConfig();
  b = await startBroker(
    {
      ...base,
      port: 0,
      host: '127.0.0.1',
      backends: { ...base.backends, messages: 'postgres', events: 'postgres', sessions: 'postgres' },
      databaseUrl: url,
    },
    createLogger({ level: 'silent' }),
  );
}, 120_000);

afterAll(async () => {
  await b?.close();
  await own?.destroy();
});

describe('PostgreSQL outage', () => {
  it('answers 503 + Retry-After while PostgreSQL is down, recovers by itself, loses no acknowledged write', async () => {
    const watcher = collect(`${b.url}/messages?watch=true&conversation_id=outage`);
    await eventually(() => b.deps.hub.stats().subscribers >= 1);
    const acked: number[] = [];
    const refused: Array<{ status: number; retryAfter: string | null; code: string }> = [];
    let stop = false;
    let n = 0;
    const writer = (async () => {
      while (!stop) {
        const i = n++;
        const res = await post(`${b.url}/messages`, {
          conversation_id: 'outage',
          query_id: 'q',
          messages: [{ role: 'user', content: `m${i}` }],
        });
        const body = await json(res);
        if (res.status === 201) acked.push(i);
        else {
          refused.push({
            status: res.status,
            retryAfter: res.headers.get('retry-after'),
            code: body.error?.code,
          });
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    })();

    await eventually(() => acked.length >= 30);
    await own.stop('immediate'); // mid-ingest, like a crash
    await eventually(() => refused.length >= 5, 20_000);

    const ready = await fetch(`${b.url}/readyz`);
    expect(ready.status).toBe(503);
    const readyBody = await json(ready);
    expect(readyBody.error.code).toBe('storage_unavailable');
    expect(readyBody.error.message).toMatch(/^postgres \(messages, events, sessions\) is unavailable/);
    const read = await fetch(`${b.url}/messages?conversation_id=outage`);
    expect(read.status).toBe(503);
    expect(read.headers.get('retry-after')).toBe('2');
    const event = await post(`${b.url}/events`, { reason: 'QueryExecutionStart', data: { queryId: 'q' } });
    expect(event.status).toBe(503);

    const ackedBeforeRestart = acked.length;
    await own.start();
    await eventually(() => acked.length >= ackedBeforeRestart + 30, 30_000);
    stop = true;
    await writer;

    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) expect(r).toEqual({ status: 503, retryAfter: '2', code: 'storage_unavailable' });
    expect((await fetch(`${b.url}/readyz`)).status).toBe(200);

    const stored = await json(fetch(`${b.url}/messages?conversation_id=outage&cursor=0&limit=1000`));
    const contents = new Set(stored.items.map((m: any) => m.message.content));
    for (const i of acked) expect(contents.has(`m${i}`)).toBe(true);
    // Watchers got everything stored, in order, also what was written after the restart.
    const seqs = stored.items.map((m: any) => m.sequence);
    await watcher.until(seqs.length, 15_000);
    expect(watcher.data.map((d) => JSON.parse(d).sequence)).toEqual(seqs);
    watcher.close();
  });
});
