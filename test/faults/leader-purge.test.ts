/**
 * The controller leader killed during a mass deletion of Queries (issue 18 item 1): two real
 * `berth controller` processes, N Queries deleted at once (1,000 under BERTH_FAULTS=long, 200 in
 * `make test`), the leader killed with SIGKILL once a third of them are purged. The standby takes
 * over and finishes. A recorder stands in for the Memory and the broker and counts every purge
 * call per Query with its Idempotency-Key. Afterwards: every Query is gone, every one was purged
 * (messages and events), only purges in flight at the kill were sent again, and every attempt at
 * one purge carried the same key — which the broker uses to run it once (its own tests).
 */
import { rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kinds, QUERY_FINALIZER } from '../../pkg/api/index.ts';
import { create, liveClient, queryObject, spawnElectingController, until } from '../controller/support.ts';
import { createNamespace, kubeConfig } from '../support/kube.ts';
import type { Spawned } from '../support/process.ts';

const LONG = process.env.BERTH_FAULTS === 'long';
const N = LONG ? 1000 : 200;
const LEASE_MS = 3000;
const admin = kubeConfig();
const procs: Spawned[] = [];
let ns: string;
let kubeconfigFile: string;

/** Memory and broker at once: counts DELETE /queries/{q}/messages and DELETE /events/{q} per query. */
interface Recorder {
  url: string;
  messages: Map<string, number>;
  events: Map<string, number>;
  /** The Idempotency-Key of each purge request, per query and domain. */
  keys: Map<string, Set<string>>;
  server: Server;
}

async function startRecorder(): Promise<Recorder> {
  const messages = new Map<string, number>();
  const events = new Map<string, number>();
  const keys = new Map<string, Set<string>>();
  const server = createServer((req, res) => {
    const m = /^\/queries\/([^/]+)\/messages$/.exec(req.url ?? '');
    const e = /^\/events\/([^/?]+)$/.exec(req.url ?? '');
    const count = (map: Map<string, number>, q: string) => {
      map.set(q, (map.get(q) ?? 0) + 1);
      const id = `${q} ${map === messages ? 'messages' : 'events'}`;
      keys.set(id, (keys.get(id) ?? new Set()).add(String(req.headers['idempotency-key'] ?? '')));
    };
    // A little latency, as a real backend has, so purges are in flight when the leader dies.
    setTimeout(() => {
      if (req.method === 'DELETE' && m) count(messages, m[1] as string);
      else if (req.method === 'DELETE' && e) count(events, e[1] as string);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"deleted":0}');
    }, 5);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    messages,
    events,
    keys,
    server,
  };
}

let rec: Recorder;

function controller(name: string): Spawned {
  const p = spawnElectingController({
    namespace: ns,
    name,
    kubeconfig: kubeconfigFile,
    brokerUrl: rec.url,
    leaseMs: LEASE_MS,
  });
  procs.push(p);
  return p;
}

/** Runs `fn` over `items`, `width` at a time. */
async function pool<T>(items: T[], width: number, fn: (t: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}

beforeAll(async () => {
  ns = await createNamespace('fault-purge');
  rec = await startRecorder();
  kubeconfigFile = join(tmpdir(), `berth-fault-purge-kubeconfig-${process.pid}`);
  writeFileSync(kubeconfigFile, kubeConfig('controller').exportConfig());
  await create(admin, 'memories', {
    kind: 'Memory',
    metadata: { name: 'default', namespace: ns },
    spec: { address: { value: rec.url } },
  });
});

afterAll(async () => {
  for (const p of procs) if (p.proc.exitCode === null) p.proc.kill('SIGKILL');
  await Promise.all(procs.map((p) => p.exited));
  await new Promise<void>((r) => rec?.server.close(() => r()));
  if (kubeconfigFile) rmSync(kubeconfigFile, { force: true }); // the controller's token
});

describe(`the controller leader killed during ${N} Query deletions`, () => {
  it(
    'the standby finishes: every Query purged and gone, repeats only for purges in flight at the kill',
    async () => {
      const names = Array.from({ length: N }, (_, i) => `q-${String(i).padStart(4, '0')}`);
      // Created with the cleanup finalizer, as the API service creates them.
      await pool(names, 16, async (name) => {
        const q = queryObject(ns, name);
        await create(admin, 'queries', { ...q, metadata: { ...q.metadata, finalizers: [QUERY_FINALIZER] } });
      });
      const a = controller('purge-a');
      const b = controller('purge-b');
      const leaderLine = await Promise.race(
        [a, b].map((p) => p.waitForLine(/became leader/, 60_000).then(() => p)),
      );
      const [leader, standby] = leaderLine === a ? [a, b] : [b, a];

      // Every DELETE is answered at once (the Query stays, Terminating, until purged).
      const client = liveClient(admin);
      const deleting = pool(names, 16, async (name) => {
        await client.delete(Kinds.Query, { namespace: ns, name });
      });
      await until('a third purged', () => rec.events.size >= N / 3, 60_000);
      leader.proc.kill('SIGKILL');
      const killedAt = Date.now();
      const purgedAtKill = rec.events.size;
      await deleting;
      await standby.waitForLine(/became leader/, LEASE_MS + 10_000);
      const takeoverMs = Date.now() - killedAt;
      await until(
        'every Query gone',
        async () => (await client.list(Kinds.Query, { namespace: ns })).items.length === 0,
        LONG ? 180_000 : 60_000,
      );

      const missing = names.filter((n) => !rec.messages.get(n) || !rec.events.get(n));
      expect(missing, 'Queries never purged').toEqual([]);
      const repeated = names.filter((n) => (rec.messages.get(n) ?? 0) > 1 || (rec.events.get(n) ?? 0) > 1);
      // At most what the leader's workers (8) had in flight, each retried once by the standby.
      expect(repeated.length).toBeLessThanOrEqual(16);
      // Every attempt at one Query's purge of one domain — the leader's and the standby's repeat —
      // carried the same Idempotency-Key, so the Berth broker runs it once and answers the repeat
      // from the key (test/broker/messages.test.ts, pg-idempotency.test.ts): purged exactly once.
      for (const n of names)
        for (const domain of ['messages', 'events']) {
          const sent = [...(rec.keys.get(`${n} ${domain}`) ?? [])];
          expect(sent, `${n} ${domain}`).toHaveLength(1);
          expect(sent[0]).toMatch(new RegExp(`^berth-purge-[0-9a-f-]{36}-${domain}$`));
        }
      console.log(
        'leader kill during deletions',
        JSON.stringify({
          queries: N,
          purgedAtKill,
          takeoverMs,
          purgedOnce: N - repeated.length,
          repeated: repeated.length,
        }),
      );
    },
    LONG ? 400_000 : 150_000,
  );
});
