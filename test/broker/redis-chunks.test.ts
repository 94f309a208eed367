import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import type { RedisChunkStore } from '../../pkg/broker/chunks/redis-store.ts';
import { chunkStoreContract } from '../../pkg/broker/chunks/store.contract.ts';
import { chunkJson, chunkText, type StoredChunk } from '../../pkg/broker/chunks/types.ts';
import { recordingLogger } from '../support/logs.ts';
import { collect, json, post, readSse } from './harness.ts';
import {
  brokerOn,
  dropPrefix,
  eventually,
  openStore,
  sharedRedisUrl,
  uniquePrefix,
} from './redis-support.ts';

const texts = (cs: Record<string, unknown>[]) => cs.map((c) => chunkText(c));
const prefixes: string[] = [];
const fresh = () => {
  const p = uniquePrefix();
  prefixes.push(p);
  return p;
};
afterAll(async () => {
  for (const p of prefixes) await dropPrefix(sharedRedisUrl(), p);
});

// The same assertions as the memory store's run (pkg/broker/chunks/memory-store.test.ts).
chunkStoreContract('redis', () => openStore({ url: sharedRedisUrl(), keyPrefix: fresh() }));

/** Kills a store's blocking reader connection on the server side (as a network drop would). */
async function killReader(admin: Redis, store: RedisChunkStore): Promise<void> {
  const list = await admin.client('LIST');
  const m = new RegExp(`id=(\\d+) [^\\n]*name=berth-chunks-reader-${store.instance}\\b`).exec(String(list));
  if (!m) throw new Error('reader connection not found in CLIENT LIST');
  await admin.client('KILL', 'ID', m[1] as string);
}

const expectConsecutive = (seqs: number[], from: number, n: number) =>
  expect(seqs).toEqual(Array.from({ length: n }, (_, i) => from + i));

describe('Redis chunk store records', () => {
  it('stores the same bytes it returns (records are built in Lua and in TypeScript alike)', async () => {
    const s = await openStore({ url: sharedRedisUrl(), keyPrefix: fresh(), maxBatch: 2 });
    try {
      const query = 'q "quoted" \\ ünï ✓';
      const chunks = [{ a: 'line\nbreak' }, { error: { message: 'x' } }, { emoji: '🙂' }, {}, { n: 5 }];
      const written = await s.append(query, texts(chunks));
      const { marker } = await s.complete(query);
      const stored = (await s.page(query, 0, 10)).items;
      expect(stored.map((e) => e.json)).toEqual([...written, marker].map((e) => e?.json));
      expect(stored.map((e) => [e.seq, e.kind, e.isError, e.chunkAt, e.query])).toEqual(
        [...written, marker].map((e) => [e?.seq, e?.kind, e?.isError, e?.chunkAt, e?.query]),
      );
      expect(stored.slice(0, 5).map((e) => JSON.parse(chunkJson(e)))).toEqual(chunks);
      const fh = (await s.page(undefined, 0, 10)).items;
      expect(fh.map((e) => e.json)).toEqual(stored.map((e) => e.json));
      expect(fh.every((e) => e.query === query)).toBe(true);
    } finally {
      await s.close();
    }
  });
});

describe('Redis chunk store across replicas', () => {
  it("delivers A's writes to B's listener in order without gaps, also across a killed reader connection", async () => {
    const keyPrefix = fresh();
    const a = await openStore({ url: sharedRedisUrl(), keyPrefix });
    const { logger, lines: logs } = recordingLogger();
    const b = await openStore({ url: sharedRedisUrl(), keyPrefix }, logger);
    const admin = new Redis(sharedRedisUrl());
    try {
      const seen: StoredChunk[] = [];
      b.onAppend((e) => seen.push(e));
      // Two writers on A and one on B interleave; B's listener must see one ordered sequence.
      await Promise.all([
        a.append('q1', texts(Array.from({ length: 300 }, (_, i) => ({ i })))),
        a.append('q2', texts(Array.from({ length: 300 }, (_, i) => ({ i })))),
        b.append('q3', texts([{ i: 0 }])),
      ]);
      await eventually(() => seen.length === 601);
      expectConsecutive(
        seen.map((e) => e.seq),
        1,
        601,
      );

      await killReader(admin, b);
      // Written while B's reader is down or reconnecting: caught up from the last delivered id.
      for (let i = 0; i < 20; i++) await a.append('q1', texts([{ after: i }]));
      await a.complete('q1');
      await eventually(() => seen.length === 622);
      expectConsecutive(
        seen.map((e) => e.seq),
        1,
        622,
      );
      expect(seen.at(-1)).toMatchObject({ query: 'q1', kind: 'complete' });
      expect(b.head()).toBe(622);
      expect((await b.state('q1'))?.completed).toBe(true);
      expect(b.healthy()).toBe(true);
      // The kill really cut the reader: it noticed and caught up after reconnecting.
      expect(logs.join('')).toMatch(/chunk reader lost Redis[\s\S]*chunk reader reconnected/);
    } finally {
      admin.disconnect();
      await a.close();
      await b.close();
    }
  });

  it("delivers a replica's own writes on the script's reply, and every record once in order to both listeners when writes interleave", async () => {
    const keyPrefix = fresh();
    const { logger, lines: logs } = recordingLogger();
    const a = await openStore({ url: sharedRedisUrl(), keyPrefix, maxBatch: 3 }, logger);
    const b = await openStore({ url: sharedRedisUrl(), keyPrefix, maxBatch: 3 });
    const admin = new Redis(sharedRedisUrl());
    try {
      const seenA: StoredChunk[] = [];
      const seenB: StoredChunk[] = [];
      a.onAppend((e) => seenA.push(e));
      b.onAppend((e) => seenB.push(e));
      // A's blocking read is cut (its reconnect waits ≥ 100 ms): what A writes now reaches A's
      // listener on the script's reply, not through the read.
      await killReader(admin, a);
      await eventually(() => logs.join('').includes('chunk reader lost Redis'));
      for (let i = 0; i < 5; i++) {
        const written = await a.append('own', texts([{ i }, { j: i }]));
        expect(seenA.slice(-2).map((e) => e.json)).toEqual(written.map((e) => e.json));
      }
      const { marker } = await a.complete('own');
      expect(seenA.at(-1)?.json).toBe(marker?.json);
      expect(seenA).toHaveLength(11);
      // The read, once back, skips what was delivered already.
      await eventually(() => logs.join('').includes('chunk reader reconnected'));
      // Both write at once, in batches of 3 that interleave with the other replica's script calls.
      await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          (i % 2 ? a : b).append(
            `q${i % 5}`,
            texts(Array.from({ length: 1 + (i % 7) }, (_, k) => ({ i, k }))),
          ),
        ),
      );
      const total = 11 + Array.from({ length: 40 }, (_, i) => 1 + (i % 7)).reduce((x, y) => x + y, 0);
      await eventually(() => seenA.length >= total && seenB.length >= total);
      await new Promise((r) => setTimeout(r, 100)); // a duplicate would arrive within the next read
      expectConsecutive(
        seenA.map((e) => e.seq),
        1,
        total,
      );
      expectConsecutive(
        seenB.map((e) => e.seq),
        1,
        total,
      );
      expect(seenA.map((e) => e.json)).toEqual(seenB.map((e) => e.json));
    } finally {
      admin.disconnect();
      await a.close();
      await b.close();
    }
  });

  it('tells every replica of a purge on any of them, also one whose reader was cut at the time', async () => {
    const keyPrefix = fresh();
    const a = await openStore({ url: sharedRedisUrl(), keyPrefix });
    const b = await openStore({ url: sharedRedisUrl(), keyPrefix });
    const admin = new Redis(sharedRedisUrl());
    try {
      let purgesA = 0;
      let purgesB = 0;
      a.onPurge(() => purgesA++);
      b.onPurge(() => purgesB++);
      await a.append('q', texts([{ i: 1 }]));
      expect(await a.purge()).toBe(1);
      await eventually(() => purgesA === 1 && purgesB === 1);
      await killReader(admin, b);
      await a.purge(); // while B's reader reconnects: it reads the purge from where it was
      await eventually(() => purgesB === 2);
      expect(purgesA).toBe(2);
      // The purge marker is not a chunk: pages and sequences go on as before.
      const [next] = await b.append('q', texts([{ i: 2 }]));
      expect(next?.seq).toBe(2);
      expect((await a.page(undefined, 0, 10)).items.map((e) => e.seq)).toEqual([2]);
    } finally {
      admin.disconnect();
      await a.close();
      await b.close();
    }
  });

  it('keeps sequences stable when the firehose is trimmed (MAXLEN ~), and expires query streams by TTL', async () => {
    const keyPrefix = fresh();
    const s = await openStore({ url: sharedRedisUrl(), keyPrefix, maxChunks: 100, ttlSeconds: 30 });
    const admin = new Redis(sharedRedisUrl());
    try {
      for (let i = 0; i < 10; i++)
        await s.append('big', texts(Array.from({ length: 100 }, (_, j) => ({ n: i * 100 + j }))));
      const fh = await s.page(undefined, 0, 1000);
      expect(fh.total).toBeLessThan(1000);
      // Trimmed from the front: what is left keeps its original sequences.
      const first = fh.items[0] as StoredChunk;
      expect(JSON.parse(first.json)).toMatchObject({ sequence: first.seq, chunk: { n: first.seq - 1 } });
      expect(fh.items.at(-1)?.seq).toBe(1000);
      const after = await s.page(undefined, 995, 10);
      expect(after.items.map((e) => e.seq)).toEqual([996, 997, 998, 999, 1000]);
      const ttl = await admin.ttl(`${keyPrefix}q:big`);
      expect(ttl).toBeGreaterThan(25);
      expect(await admin.ttl(`${keyPrefix}st:big`)).toBeGreaterThan(25);
      expect(await admin.ttl(`${keyPrefix}seq`)).toBe(-1);
    } finally {
      admin.disconnect();
      await s.close();
    }
  });

  it('serves SSE on replica B for chunks POSTed (NDJSON) to replica A, ending with [DONE]', async () => {
    const keyPrefix = fresh();
    const sa = await openStore({ url: sharedRedisUrl(), keyPrefix });
    const sb = await openStore({ url: sharedRedisUrl(), keyPrefix });
    const [a, b] = await Promise.all([brokerOn(sa), brokerOn(sb)]);
    try {
      const firehose = collect(`${b.url}/stream?watch=true`);
      const stream = fetch(`${b.url}/stream/nd?wait-for-query=10&from-beginning=true`).then((r) =>
        readSse(r, (t) => t.includes('[DONE]')),
      );
      await new Promise((r) => setTimeout(r, 200));
      const lines = Array.from({ length: 500 }, (_, i) =>
        JSON.stringify({ choices: [{ delta: { content: `${i}` } }] }),
      );
      const res = await fetch(`${a.url}/stream/nd`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-ndjson' },
        body: lines.join('\n'),
      });
      expect(await res.json()).toEqual({ status: 'stream_processed', query: 'nd', chunks_received: 500 });
      expect(await json(post(`${a.url}/stream/nd/complete`, ''))).toEqual({
        status: 'completed',
        query: 'nd',
      });
      const text = await stream;
      const data = [...text.matchAll(/^data: (.*)$/gm)].map((m) => m[1]);
      expect(data.length).toBe(501);
      expect(data.slice(0, 500)).toEqual(lines);
      expect(data[500]).toBe('[DONE]');
      await firehose.until(501);
      expect(firehose.ids).toEqual(Array.from({ length: 501 }, (_, i) => String(i + 1)));
      firehose.close();
      // A reader arriving on B after completion gets the run, and a live-only one gets [DONE] at once.
      const replay = await readSse(await fetch(`${b.url}/stream/nd?from-beginning=true`), (t) =>
        t.includes('[DONE]'),
      );
      expect(replay.match(/^data: /gm)?.length).toBe(501);
      const live = await readSse(await fetch(`${b.url}/stream/nd`), (t) => t.includes('[DONE]'), 3000);
      expect(live).toContain('data: [DONE]');
      expect((await fetch(`${b.url}/stream/unknown`)).status).toBe(404);
      const page = await json(fetch(`${b.url}/stream?query=nd&limit=2&cursor=499`));
      expect(page).toMatchObject({ total: 501, hasMore: false, nextCursor: 501 });
    } finally {
      await Promise.all([a.close(), b.close()]);
      await Promise.all([sa.close(), sb.close()]);
    }
  });
});
