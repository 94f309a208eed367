/**
 * A broker replica killed with watchers attached (issue 18 item 1): two `berth broker` processes
 * on one PostgreSQL behind a Service-like proxy; every watcher is connected to replica A when A is
 * killed with SIGKILL in the middle of a write load. What the clients see: writers get connection
 * errors for the requests in flight (and retry them), watchers lose their stream and reconnect
 * through the Service to B with `Last-Event-ID`. Afterwards every acknowledged write is stored, and
 * every watcher has seen every stored message exactly once, in order, without a gap.
 */
import { EventSource } from 'eventsource';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../broker/harness.ts';
import { spawnPgBroker, TestDatabases } from '../broker/pg-harness.ts';
import type { Spawned } from '../support/process.ts';
import { startServiceProxy } from './service-proxy.ts';

const LONG = process.env.BERTH_FAULTS === 'long';
const WRITERS = 4;
const PER_WRITER = LONG ? 500 : 60;
const WATCHERS = 3;

const dbs = new TestDatabases();
const procs: Spawned[] = [];
afterAll(async () => {
  for (const p of procs) if (p.proc.exitCode === null) p.proc.kill('SIGKILL');
  await dbs.dropAll();
});

async function replica(databaseUrl: string) {
  const r = await spawnPgBroker(databaseUrl);
  procs.push(r.p);
  return r;
}

/** An EventSource on the Service that records what it received and how often it (re)connected. */
function watcher(url: string) {
  const es = new EventSource(url);
  const seqs: number[] = [];
  let opens = 0;
  es.onopen = () => {
    opens++;
  };
  es.onmessage = (m) => {
    seqs.push(JSON.parse(m.data).sequence);
  };
  return { es, seqs, opens: () => opens };
}

describe('a broker replica killed with watchers attached', () => {
  it('loses no acknowledged write, and every watcher resumes on the other replica without gap or duplicate', async () => {
    const db = await dbs.fresh();
    const [a, b] = await Promise.all([replica(db), replica(db)]);
    const service = await startServiceProxy(() => [a.port, b.port]);
    try {
      const watchers = Array.from({ length: WATCHERS }, () => watcher(`${service.url}/messages?watch=true`));
      await eventually(() => watchers.every((w) => w.opens() === 1), 10_000);
      expect(service.connections.get(a.port)).toBe(WATCHERS);

      const acked: string[] = [];
      let refused = 0;
      let killed = false;
      const write = async (content: string) => {
        for (;;) {
          try {
            const res = await fetch(`${service.url}/messages`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({
                conversation_id: 'c',
                query_id: 'q',
                messages: [{ role: 'user', content }],
              }),
            });
            if (res.status === 201) return void acked.push(content);
            refused++;
          } catch {
            refused++; // the connection died with A: not acknowledged, so sent again
          }
        }
      };
      await Promise.all(
        Array.from({ length: WRITERS }, async (_, w) => {
          for (let i = 0; i < PER_WRITER; i++) {
            if (!killed && acked.length >= (WRITERS * PER_WRITER) / 3) {
              killed = true;
              a.p.proc.kill('SIGKILL');
            }
            await write(`${w}-${i}`);
          }
        }),
      );
      expect(killed).toBe(true);
      expect(await a.p.exited).not.toBe(0);

      // Every stored message, page by page.
      type Stored = { sequence: number; message: { content: string } };
      const stored: { items: Stored[] } = { items: [] };
      for (let cursor = 0; ; ) {
        const url = `${service.url}/messages?cursor=${cursor}&limit=1000&conversation_id=c`;
        const page = (await (await fetch(url)).json()) as {
          items: Stored[];
          hasMore: boolean;
          nextCursor: number;
        };
        stored.items.push(...page.items);
        if (!page.hasMore) break;
        cursor = page.nextCursor;
      }
      const contents = new Set(stored.items.map((m) => m.message.content));
      for (const c of acked) expect(contents.has(c), `acknowledged ${c}`).toBe(true);
      const seqs = stored.items.map((m) => m.sequence);
      await eventually(() => watchers.every((w) => w.seqs.length >= seqs.length), 20_000, 20);
      for (const w of watchers) {
        expect(w.seqs).toEqual(seqs);
        expect(w.opens(), 'reconnected once, to B').toBe(2);
        w.es.close();
      }
      console.log(
        'replica kill',
        JSON.stringify({
          acked: acked.length,
          stored: seqs.length,
          failedWriteAttempts: refused,
          watchers: WATCHERS,
        }),
      );
    } finally {
      await service.close();
    }
  }, 120_000);
});
