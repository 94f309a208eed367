import { afterAll, describe, expect, it } from 'vitest';
import type { Spawned } from '../support/process.ts';
import { collect, eventually, json, post } from './harness.ts';
import { spawnPgBroker, TestDatabases } from './pg-harness.ts';

/**
 * Two `berth broker` processes on one PostgreSQL: what is written on one replica reaches the
 * EventSource watchers of the other, in order and without gaps, and keeps doing so while the first
 * is killed with SIGKILL; a restarted replica serves the same data.
 */
const dbs = new TestDatabases();
const procs: Spawned[] = [];
afterAll(async () => {
  for (const p of procs) p.proc.kill('SIGKILL');
  await dbs.dropAll();
});

async function replica(databaseUrl: string) {
  const r = await spawnPgBroker(databaseUrl);
  procs.push(r.p);
  return r;
}

const msg = (url: string, conv: string, q: string, content: string) =>
  post(`${url}/messages`, { conversation_id: conv, query_id: q, messages: [{ role: 'user', content }] });

describe('two broker replicas on one PostgreSQL', () => {
  it('watchers on B see every message written on A in order, also after A is killed -9', async () => {
    const db = await dbs.fresh();
    const [a, b] = await Promise.all([replica(db), replica(db)]);
    const onB = collect(`${b.url}/messages?watch=true`);
    const convsOnB = collect(`${b.url}/conversations?watch=true`);
    await eventually(async () => (await json(fetch(`${b.url}/readyz`))).sse.subscribers >= 2);

    // Concurrent writers on both replicas: commits interleave and arrive out of sequence order.
    await Promise.all(
      [a.url, a.url, b.url, a.url].map(async (url, w) => {
        for (let i = 0; i < 40; i++)
          expect((await msg(url, `conv-${w}`, `q${w}`, `${w}-${i}`)).status).toBe(201);
      }),
    );
    await onB.until(160, 15_000);
    await convsOnB.until(4);

    a.p.proc.kill('SIGKILL');
    expect(await a.p.exited).not.toBe(0);
    for (let i = 0; i < 20; i++) expect((await msg(b.url, 'after-kill', 'q', `k-${i}`)).status).toBe(201);
    await onB.until(180, 15_000);

    const stored = await json(fetch(`${b.url}/messages?cursor=0&limit=1000`));
    const seqs = stored.items.map((m: any) => m.sequence);
    expect(seqs).toHaveLength(180);
    expect(onB.data.map((d) => JSON.parse(d).sequence)).toEqual(seqs);
    expect(onB.ids).toEqual(seqs.map(String));
    await convsOnB.until(5);
    expect(convsOnB.data.map((d) => JSON.parse(d).conversation_id).sort()).toEqual([
      'after-kill',
      'conv-0',
      'conv-1',
      'conv-2',
      'conv-3',
    ]);

    // A restarted replica serves the same data and replays it to a new watcher.
    const a2 = await replica(db);
    const replayed = collect(`${a2.url}/messages?watch=true&from-beginning=true`);
    await replayed.until(180, 15_000);
    expect(replayed.data.map((d) => JSON.parse(d).sequence)).toEqual(seqs);
    const r = await msg(a2.url, 'after-kill', 'q', 'from-a2');
    expect((await json(r)).firstSequence).toBeGreaterThan(seqs.at(-1));
    await onB.until(181, 15_000);
    for (const w of [onB, convsOnB, replayed]) w.close();
  });
});
