/**
 * Where a live watch starts on the durable broker (issue 27 item 6): a live watch (`watch=true`, no
 * cursor) opened on replica B after a write was acknowledged on replica A must not deliver that
 * write, even while B's change feed has not caught up yet; it delivers every later write. Two
 * `berth broker` processes share a PostgreSQL of the test's own. B's feed is held back
 * deterministically: the LISTEN backends of the server are stopped (SIGSTOP) while the write is
 * acknowledged and the watch opens, so no notification reaches B until they are continued — then
 * B's feed catches up and hands the earlier write to its hub. Then the same after a PostgreSQL
 * outage (stopped and started again); while it is down a live watch is refused with 503. A live
 * watcher opened at the start sees every stored row once, in order, across the outage. Domains:
 * messages, events, sessions and conversations (each has its own sequence and feed).
 */
import { EventSource } from 'eventsource';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OwnPostgres, withDatabase } from '../broker/pg-harness.ts';
import { type Spawned, spawnBerth } from '../support/process.ts';
import { eventually } from '../support/wait.ts';

let own: OwnPostgres;
let db: string;
const procs: Spawned[] = [];
let a: string;
let b: string;

beforeAll(async () => {
  own = await OwnPostgres.create();
  const admin = new pg.Client({ connectionString: own.url });
  await admin.connect();
  await admin.query('CREATE DATABASE berth');
  await admin.end();
  db = withDatabase(own.url, 'berth');
  a = await replica();
  b = await replica();
}, 120_000);
afterAll(async () => {
  for (const p of procs) if (p.proc.exitCode === null) p.proc.kill('SIGKILL');
  await own?.destroy();
});

/** A broker with messages, events and sessions on the test's PostgreSQL. */
async function replica(): Promise<string> {
  const p = spawnBerth(['broker', '--port', '0'], {
    ...process.env,
    LOG_LEVEL: 'info',
    MESSAGE_BACKEND: 'postgres',
    EVENT_BACKEND: 'postgres',
    SESSIONS_BACKEND: 'postgres',
    MIGRATE_ON_START: 'true',
    DATABASE_URL: db,
  });
  procs.push(p);
  const line = await p.waitForLine(/"msg":"broker listening"/, 30_000);
  return `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`;
}

/** Runs `fn` with every LISTEN backend of the test's server stopped: no replica hears a NOTIFY. */
async function withoutNotifications<T>(fn: () => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: db });
  await c.connect();
  const pids = (
    await c.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE application_name = 'berth-broker-listen'",
    )
  ).rows.map((r) => r.pid);
  await c.end();
  expect(pids.length, 'one LISTEN connection per replica').toBe(2);
  for (const pid of pids) process.kill(pid, 'SIGSTOP');
  try {
    return await fn();
  } finally {
    for (const pid of pids) process.kill(pid, 'SIGCONT');
  }
}

function watcher(url: string) {
  const es = new EventSource(url);
  const seqs: number[] = [];
  let open = false;
  es.onopen = () => {
    open = true;
  };
  es.onmessage = (m) => {
    seqs.push(JSON.parse(m.data).sequence);
  };
  return { es, seqs, opened: () => open };
}

interface Domain {
  path: string;
  write(base: string, tag: string): Promise<Response>;
  /** Domains whose write answers another domain's sequence: the last one listed. */
  listed?: boolean;
}
const post = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const DOMAINS: Domain[] = [
  {
    path: '/messages',
    write: (base, tag) =>
      post(`${base}/messages`, {
        conversation_id: 'c',
        query_id: 'q',
        messages: [{ role: 'user', content: tag }],
      }),
  },
  {
    path: '/events',
    // One session per event: each session changes once, so the sessions list holds every change.
    write: (base, tag) => post(`${base}/events`, { reason: tag, data: { queryId: 'q', sessionId: tag } }),
  },
  {
    path: '/sessions',
    write: (base, tag) => post(`${base}/events`, { reason: tag, data: { queryId: 'q', sessionId: tag } }),
    listed: true,
  },
  {
    path: '/conversations',
    write: (base, tag) =>
      post(`${base}/messages`, {
        conversation_id: tag,
        query_id: 'q',
        messages: [{ role: 'user', content: tag }],
      }),
    listed: true,
  },
];

async function acked(d: Domain, base: string, tag: string): Promise<number> {
  const res = await d.write(base, tag);
  expect(res.status, `${d.path} write ${tag}`).toBe(201);
  const body = (await res.json()) as { sequence?: number; lastSequence?: number };
  if (d.listed) return (await stored(d.path)).at(-1) as number;
  return (body.sequence ?? body.lastSequence) as number;
}

/** Write on A (acknowledged) while B's feed is held back, open a live watch on B, then write again. */
async function race(d: Domain, round: string): Promise<void> {
  const w = await withoutNotifications(async () => {
    const earlier = await acked(d, a, `${round}-earlier`);
    const w = watcher(`${b}${d.path}?watch=true`);
    await eventually(w.opened, 10_000);
    return { ...w, earlier };
  });
  // B's feed catches up now (the notification arrives): the earlier write reaches B's hub.
  const next = await acked(d, a, `${round}-next`);
  expect(next).toBeGreaterThan(w.earlier);
  await eventually(() => w.seqs.includes(next), 10_000);
  w.es.close();
  expect(w.seqs, `${d.path} live watch on B opened after ${w.earlier} was acknowledged on A`).toEqual([next]);
}

async function stored(path: string): Promise<number[]> {
  const seqs: number[] = [];
  for (let cursor = 0; ; ) {
    const res = await fetch(`${a}${path}?cursor=${cursor}&limit=1000`);
    const page = (await res.json()) as {
      items: Array<{ sequence: number }>;
      hasMore: boolean;
      nextCursor: number;
    };
    seqs.push(...page.items.map((i) => i.sequence));
    if (!page.hasMore) return seqs;
    cursor = page.nextCursor;
  }
}

describe('a live watch on one replica after a write acknowledged on another', () => {
  it('starts after that write, before and after a PostgreSQL outage; the feed catches up without loss or duplicate', async () => {
    // Live watchers opened before anything was written: they must see every row once, in order.
    const early = DOMAINS.map((d) => watcher(`${b}${d.path}?watch=true`));
    await eventually(() => early.every((w) => w.opened()), 10_000);

    for (const d of DOMAINS) await race(d, 'before');

    await own.stop();
    for (const d of DOMAINS) {
      const res = await fetch(`${b}${d.path}?watch=true`);
      expect(res.status, `a live ${d.path} watch while PostgreSQL is down`).toBe(503);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('storage_unavailable');
      expect((await d.write(a, 'during')).status).toBe(503);
    }
    await own.start();
    // Both replicas are back: writes succeed and both LISTEN connections are up again.
    await eventually(async () => (await DOMAINS[0]?.write(a, 'probe'))?.status === 201, 30_000, 200);
    await eventually(
      async () => {
        const c = new pg.Client({ connectionString: db });
        await c.connect();
        const n = await c.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'berth-broker-listen'",
        );
        await c.end();
        return n.rows[0]?.n === 2;
      },
      30_000,
      200,
    );

    for (const d of DOMAINS) await race(d, 'after');

    for (const [i, d] of DOMAINS.entries()) {
      const all = await stored(d.path);
      const w = early[i] as ReturnType<typeof watcher>;
      await eventually(() => all.every((seq) => w.seqs.includes(seq)), 15_000);
      w.es.close();
      const what = `${d.path}: the early live watcher saw every stored row once, in order`;
      expect(
        [...w.seqs].sort((x, y) => x - y),
        what,
      ).toEqual([...new Set(w.seqs)]);
      // A session keeps only its latest change: the watcher saw the superseded ones too.
      if (d.path === '/sessions')
        expect(
          w.seqs.filter((seq) => all.includes(seq)),
          what,
        ).toEqual(all);
      else expect(w.seqs, what).toEqual(all);
    }
  }, 180_000);
});
