/**
 * What a cluster does to the durable install (issue 33 item 3, third and fourth bullets), on a local
 * node with the image built from this checkout: `manifests/overlays/durable-broker` (3 broker
 * replicas, the migration Job) on a PostgreSQL and a Redis of the test's own (durable-stack.ts), the
 * API in the manifests' `basic` mode with an API key.
 *
 *  - Under a write load through the broker's Service (messages and events in PostgreSQL, chunks in
 *    Redis; acknowledged writes recorded), `kubectl rollout restart deployment/berth-broker`, then a
 *    broker pod deleted: no acknowledged write lost, and every EventSource watcher (the `eventsource`
 *    package, through the Service) resumes with Last-Event-ID without gap or duplicate.
 *  - SIGTERM drains as docs/observability.md says: a stream open on the deleted broker pod, and a
 *    `/v1/broker` relay open on a deleted API pod, end with the final `shutting_down` frame (no
 *    `id:`), cleanly, after SHUTDOWN_GRACE_SECONDS (25) and before terminationGracePeriodSeconds
 *    (30); the containers exit 0 (not killed).
 *  - The controller leader pod deleted: another controller holds the Lease within 15 s (the standby,
 *    or the Deployment's replacement pod when it asks first: the election has no preference), a Query created
 *    right after runs, and each Query deleted around the failover is purged exactly once (its
 *    messages through a Memory of the test's own that counts the broker's answers; its events by the
 *    broker's idempotency keys in PostgreSQL).
 *  - `kubectl rollout restart` of every Berth Deployment under a steady load of chat completions
 *    (the official `openai` SDK through the API's Service): failures counted — none may be left
 *    beyond what the SDK's retries absorb; retries reported.
 */
import { EventSource } from 'eventsource';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/wait.ts';
import {
  BERTH_DEPLOYMENTS,
  type DurableInstall,
  hostService,
  installDurable,
  NS,
  type PodInfo,
  type PurgeRecorder,
  podsOf,
  startPurgeRecorder,
  watchExits,
} from './durable-stack.ts';
import { helperQuery } from './stack.ts';

const t0 = Date.now();
let d: DurableInstall;
let exits: ReturnType<typeof watchExits>;
let recorder: PurgeRecorder | undefined;
const report: Record<string, unknown> = {};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const secs = (ms: number) => Math.round(ms / 100) / 10;

beforeAll(async () => {
  d = await installDurable((m) => console.log(m));
  exits = watchExits(d);
  console.log('durable install ready', JSON.stringify(d.timings));
}, 900_000);

afterAll(async () => {
  exits?.stop();
  await recorder?.close();
  if (d) {
    const peak = d.peak();
    console.log(
      'durable cluster suite',
      JSON.stringify({
        ...report,
        install: d.timings,
        peakNodeRssMiB: Math.round(peak.nodeRss / 2 ** 20),
        peakNodePssMiB: Math.round(peak.nodePss / 2 ** 20),
        peakControlPlaneRssMiB: Math.round(peak.controlPlaneRss / 2 ** 20),
        podsCgroupPeakMiB: Math.round(peak.podsCgroup / 2 ** 20),
        nodeRssAtPeakMiB: peak.atPeak,
        wallSeconds: secs(Date.now() - t0),
      }),
    );
  }
  await d?.stop();
}, 180_000);

const writer = () => ({ authorization: `Bearer ${d.writerToken}` });
const kubectl = (...args: string[]) => d.stack.cluster.kubectl(args);

// ---- load and watchers ----------------------------------------------------------------------------

interface Domain {
  name: string;
  /** Watched through the Service, from the start (cursor 0: replay, then live). */
  watch: string;
  /** One page of the stored records after `cursor`. */
  page: (cursor: number) => string;
  write(id: string, signal: AbortSignal): Promise<Response>;
  idOf(record: Record<string, any>): string;
}

const json = (body: unknown) => ({
  method: 'POST',
  headers: { ...writer(), 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

const DOMAINS: Domain[] = [
  {
    name: 'messages',
    watch: '/messages?watch=true&conversation_id=load&cursor=0',
    page: (c) => `/messages?conversation_id=load&cursor=${c}&limit=1000`,
    write: (id, signal) =>
      fetch(`${d.brokerUrl}/messages`, {
        ...json({ conversation_id: 'load', query_id: 'load-q', messages: [{ role: 'user', content: id }] }),
        signal,
      }),
    idOf: (r) => r.message.content,
  },
  {
    name: 'events',
    watch: '/events/load-events?watch=true&cursor=0',
    page: (c) => `/events/load-events?cursor=${c}&limit=1000`,
    write: (id, signal) =>
      fetch(`${d.brokerUrl}/events`, {
        ...json({ reason: 'Load', message: id, data: { queryId: 'load-events' } }),
        signal,
      }),
    idOf: (r) => r.message,
  },
  {
    name: 'chunks',
    watch: '/stream?watch=true&query=load-chunks&cursor=0',
    page: (c) => `/stream?query=load-chunks&cursor=${c}&limit=1000`,
    write: (id, signal) =>
      fetch(`${d.brokerUrl}/stream/load-chunks`, {
        ...json({ id, object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: id } }] }),
        signal,
      }),
    idOf: (r) => r.chunk?.id,
  },
];

interface Load {
  acked: Map<string, string[]>;
  failedAttempts: number;
  stop(): Promise<void>;
}

/** Two writers per domain, one write each 40 ms; a write not acknowledged is sent again. */
function startLoad(): Load {
  const acked = new Map(DOMAINS.map((dm) => [dm.name, [] as string[]]));
  let stopped = false;
  const load: Load = { acked, failedAttempts: 0, stop: async () => {} };
  const loops = DOMAINS.flatMap((dm) =>
    [0, 1].map(async (w) => {
      for (let i = 0; !stopped; i++) {
        const id = `${dm.name}-${w}-${i}`;
        for (;;) {
          try {
            const res = await dm.write(id, AbortSignal.timeout(10_000));
            await res.arrayBuffer();
            if (res.ok) {
              acked.get(dm.name)?.push(id);
              break;
            }
          } catch {}
          load.failedAttempts++; // not acknowledged: sent again
          await sleep(200);
        }
        await sleep(40);
      }
    }),
  );
  load.stop = async () => {
    stopped = true;
    await Promise.all(loops);
  };
  return load;
}

/** Answers other than 200 that watchers got when (re)connecting: what a client is told, and when. */
const refusedWatches: Array<{ status: number; body: string; at: number }> = [];
const authFetch: typeof fetch = async (input, init) => {
  const res = await fetch(input, {
    ...init,
    headers: { ...(init?.headers as Record<string, string>), ...writer() },
  });
  if (res.status !== 200)
    refusedWatches.push({ status: res.status, body: await res.clone().text(), at: Date.now() });
  return res;
};

interface Watcher {
  domain: Domain;
  es: EventSource;
  seqs: number[];
  opens: number;
  drainFrames: number;
  failures: string[];
}

function watcher(domain: Domain): Watcher {
  const es = new EventSource(`${d.brokerUrl}${domain.watch}`, { fetch: authFetch });
  const w: Watcher = { domain, es, seqs: [], opens: 0, drainFrames: 0, failures: [] };
  es.onopen = () => {
    w.opens++;
  };
  es.onmessage = (m) => {
    let v: { sequence?: number; error?: { code?: string } };
    try {
      v = JSON.parse(m.data);
    } catch {
      return void w.failures.push(`not JSON: ${m.data}`);
    }
    // The drain's last frame (no id: the reconnect resumes from the last record's id).
    if (v.error?.code === 'shutting_down') w.drainFrames++;
    else if (v.error || typeof v.sequence !== 'number') w.failures.push(m.data);
    else w.seqs.push(v.sequence);
  };
  es.onerror = (e) => {
    // A reconnect is scheduled unless the EventSource gave up (a non-200 answer).
    if (es.readyState === EventSource.CLOSED)
      w.failures.push(`closed: ${(e as { message?: string }).message}`);
  };
  return w;
}

async function stored(domain: Domain): Promise<Array<{ sequence: number; id: string }>> {
  const out: Array<{ sequence: number; id: string }> = [];
  for (let cursor = 0; ; ) {
    const res = await fetch(`${d.brokerUrl}${domain.page(cursor)}`, { headers: writer() });
    expect(res.status, `${domain.name} page`).toBe(200);
    const page = (await res.json()) as {
      items: Array<Record<string, any>>;
      hasMore: boolean;
      nextCursor: number;
    };
    out.push(...page.items.map((r) => ({ sequence: r.sequence as number, id: domain.idOf(r) })));
    if (!page.hasMore) return out;
    cursor = page.nextCursor;
  }
}

// ---- a raw SSE stream on one pod, read to its end ---------------------------------------------------

interface Drain {
  /** ms from the deletion to the `shutting_down` frame, and to the end of the stream. */
  finalFrameMs?: number;
  endMs?: number;
  /** The stream ended (EOF after the final frame) rather than being cut (reset, error). */
  clean: boolean;
  finalFrameHasId: boolean;
  framesBefore: number;
  error?: string;
}

/** Opens `url` (SSE) and resolves once it is connected; `ended` once the stream ends, timed from `deletedAt()`. */
async function openStream(url: string, headers: Record<string, string>, deletedAt: () => number) {
  const res = await fetch(url, { headers: { ...headers, accept: 'text/event-stream' } });
  expect(res.status, url).toBe(200);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  const drain: Drain = { clean: false, finalFrameHasId: false, framesBefore: 0 };
  const ended = (async () => {
    let buf = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) {
          drain.endMs = Date.now() - deletedAt();
          drain.clean = drain.finalFrameMs !== undefined;
          return drain;
        }
        buf += decoder.decode(value, { stream: true });
        let i = buf.indexOf('\n\n');
        while (i >= 0) {
          const frame = buf.slice(0, i);
          buf = buf.slice(i + 2);
          i = buf.indexOf('\n\n');
          const data = frame
            .split('\n')
            .filter((l) => l.startsWith('data:'))
            .map((l) => l.slice(5).trim())
            .join('\n');
          if (!data) continue;
          if (data.includes('"shutting_down"')) {
            drain.finalFrameMs = Date.now() - deletedAt();
            drain.finalFrameHasId = /^id:/m.test(frame);
          } else drain.framesBefore++;
        }
      }
    } catch (err) {
      drain.endMs = Date.now() - deletedAt();
      drain.error = String((err as Error).cause ?? err);
      return drain;
    }
  })();
  return { ended };
}

async function graceOf(deployment: string): Promise<number> {
  const dep = await d.stack.cluster.getJson<{
    spec: { template: { spec: { terminationGracePeriodSeconds: number } } };
  }>(NS, `deployment/${deployment}`);
  return dep.spec.template.spec.terminationGracePeriodSeconds;
}

const readyPod = async (app: string): Promise<PodInfo> => {
  const pods = (await podsOf(d, app)).filter((p) => p.ready && !p.deleting && p.ip);
  const [p] = pods;
  if (!p) throw new Error(`no ready ${app} pod`);
  return p;
};

async function exitOf(pod: string) {
  await eventually(() => exits.exits.has(pod), 60_000, 100);
  return exits.exits.get(pod);
}

// SHUTDOWN_GRACE_SECONDS: the manifests leave the default (docs/observability.md).
const SHUTDOWN_GRACE_MS = 25_000;
/** The manifests' preStop sleep: the pod serves on while it leaves the Service's endpoints. */
const PRESTOP_MS = 5_000;

describe('the durable install on a node', () => {
  it('a rolling restart and a broker pod deleted mid-load lose no acknowledged write; watchers resume without gap or duplicate; the pod drains within the grace period', async () => {
    const started = Date.now();
    const watchers = DOMAINS.flatMap((dm) => [watcher(dm), watcher(dm)]);
    await eventually(() => watchers.every((w) => w.opens === 1), 30_000, 50);
    const oldPods = (await podsOf(d, 'berth-broker')).map((p) => p.name);
    const load = startLoad();
    const total = () => [...load.acked.values()].reduce((n, a) => n + a.length, 0);
    try {
      await eventually(() => total() >= 150, 60_000, 50);

      // 1. The rolling restart (maxUnavailable 1, maxSurge 1, PDB minAvailable 2).
      const r0 = Date.now();
      await kubectl('rollout', 'restart', 'deployment/berth-broker', '-n', NS);
      await kubectl('rollout', 'status', 'deployment/berth-broker', '-n', NS, '--timeout=300s');
      report.brokerRolloutSeconds = secs(Date.now() - r0);
      const ackedAtRollout = total();

      // 2. A broker pod deleted, with a stream of its own open (the drain) beside the load.
      const victim = await readyPod('berth-broker');
      let deletedAt = 0;
      const stream = await openStream(
        `http://${victim.ip}:8080/messages?watch=true&conversation_id=load`,
        writer(),
        () => deletedAt,
      );
      deletedAt = Date.now();
      await kubectl('delete', 'pod', victim.name, '-n', NS, '--wait=false');
      const drain = await stream.ended;
      await kubectl('wait', '--for=delete', `pod/${victim.name}`, '-n', NS, '--timeout=60s');
      await kubectl('rollout', 'status', 'deployment/berth-broker', '-n', NS, '--timeout=300s');
      // The load goes on after the last disruption, then stops.
      const after = total();
      await eventually(() => total() >= after + 150, 60_000, 50);
      await load.stop();
      expect(ackedAtRollout).toBeGreaterThan(0);

      const grace = await graceOf('berth-broker');
      // Room for the preStop sleep and the whole drain before Kubernetes kills the pod.
      expect(grace * 1000).toBeGreaterThanOrEqual(PRESTOP_MS + SHUTDOWN_GRACE_MS);
      expect(drain.error, 'the stream was cut').toBeUndefined();
      expect(drain.clean).toBe(true);
      expect(drain.finalFrameHasId).toBe(false);
      expect(drain.framesBefore, 'the deleted pod served live records while draining').toBeGreaterThan(0);
      expect(drain.finalFrameMs).toBeGreaterThanOrEqual(SHUTDOWN_GRACE_MS - 1000);
      expect(drain.endMs).toBeLessThan(grace * 1000);
      const victimExit = await exitOf(victim.name);
      expect(victimExit, `${victim.name} exited by itself`).toMatchObject({ code: 0 });
      for (const p of oldPods) expect((await exitOf(p))?.code, `${p} (rolled)`).toBe(0);

      // Every acknowledged write stored; every watcher saw every stored record once, in order.
      const summary: Record<string, unknown> = {};
      for (const dm of DOMAINS) {
        const items = await stored(dm);
        const ids = new Set(items.map((i) => i.id));
        const acked = load.acked.get(dm.name) ?? [];
        const lost = acked.filter((id) => !ids.has(id));
        expect(lost, `${dm.name}: acknowledged but not stored`).toEqual([]);
        const seqs = items.map((i) => i.sequence);
        const mine = watchers.filter((w) => w.domain === dm);
        if (refusedWatches.length)
          console.log(
            'refused watches',
            JSON.stringify(refusedWatches.map((r) => ({ ...r, at: r.at - deletedAt }))),
          );
        await eventually(() => mine.every((w) => w.seqs.length >= seqs.length), 60_000, 50).catch(() => {});
        for (const w of mine) {
          expect(w.failures, `${dm.name} watcher`).toEqual([]);
          expect(w.seqs, `${dm.name} watcher: gap, duplicate or disorder`).toEqual(seqs);
          expect(w.opens, `${dm.name} watcher reconnected`).toBeGreaterThan(1);
        }
        summary[dm.name] = {
          acked: acked.length,
          stored: seqs.length,
          storedTwice: items.length - ids.size,
          watcherOpens: mine.map((w) => w.opens),
          drainFramesSeen: mine.map((w) => w.drainFrames),
        };
      }
      report.brokerLoad = {
        ...summary,
        failedWriteAttempts: load.failedAttempts,
        drain: { pod: victim.name, ...drain, exit: victimExit },
        seconds: secs(Date.now() - started),
      };
      console.log('broker restart under load', JSON.stringify(report.brokerLoad));
    } finally {
      await load.stop();
      for (const w of watchers) w.es.close();
    }
  }, 400_000);

  let apiDrain: Promise<{ drain: Drain; pod: string }> | undefined;

  it('the controller leader pod deleted: another controller leads within 15 s, a new Query runs, and every Query deleted around it is purged exactly once', async () => {
    const started = Date.now();
    const c = d.stack.cluster;
    // An API pod deleted at the same time (its drain is checked by the next test).
    apiDrain = (async () => {
      const pod = await readyPod('berth-api');
      let deletedAt = 0;
      const s = await openStream(
        `http://${pod.ip}:8000/v1/broker/messages?watch=true&conversation_id=load`,
        { authorization: `Bearer ${d.apiKey}` },
        () => deletedAt,
      );
      deletedAt = Date.now();
      await kubectl('delete', 'pod', pod.name, '-n', NS, '--wait=false');
      return { drain: await s.ended, pod: pod.name };
    })();
    apiDrain.catch(() => {});

    recorder = await startPurgeRecorder(d.stack.cp.address, d.brokerUrl, () => d.writerToken);
    const rec = recorder;
    // The Memory `recorded`: the recorder on the host behind Service `purge-recorder`.
    await c.apply(...hostService('purge-recorder', d.stack.cp.address, rec.port), {
      apiVersion: 'berth.dev/v1alpha1',
      kind: 'Memory',
      metadata: { name: 'recorded', namespace: NS },
      spec: { address: { valueFrom: { serviceRef: { name: 'purge-recorder', port: 80 } } } },
    });
    await c.wait(NS, 'memory/recorded', 'jsonpath={.status.phase}=ready');
    // kube-proxy has programmed the Service once it answers (the recorder passes /healthz on).
    const recorderIp = (await c.getJson<{ spec: { clusterIP: string } }>(NS, 'service/purge-recorder')).spec
      .clusterIP;
    await eventually(
      async () => (await fetch(`http://${recorderIp}/healthz`).catch(() => undefined))?.status === 200,
      30_000,
      200,
    );
    const N = 40;
    const names = Array.from({ length: N }, (_, i) => `purge-${String(i).padStart(2, '0')}`);
    await c.apply(
      ...names.map((name) => ({
        apiVersion: 'berth.dev/v1alpha1',
        kind: 'Query',
        metadata: { name, namespace: NS, labels: { 'test.berth.dev/purge': 'failover' } },
        spec: {
          input: `hello ${name}`,
          target: { type: 'agent', name: 'helper' },
          memory: { name: 'recorded' },
        },
      })),
    );
    type Q = { metadata: { name: string; uid: string }; status?: { phase?: string; message?: string } };
    let queries: Q[] = [];
    await eventually(
      async () => {
        const out = await kubectl(
          'get',
          'queries',
          '-n',
          NS,
          '-l',
          'test.berth.dev/purge=failover',
          '-o',
          'json',
        );
        queries = (JSON.parse(out) as { items: Q[] }).items;
        return (
          queries.length === N && queries.every((q) => ['done', 'error'].includes(q.status?.phase ?? ''))
        );
      },
      120_000,
      500,
    );
    for (const q of queries) expect(q.status?.phase, `${q.metadata.name}: ${q.status?.message}`).toBe('done');
    const uids = new Map(queries.map((q) => [q.metadata.name, q.metadata.uid]));
    // Each has messages (written through the recorder) and events to purge.
    for (const n of names.slice(0, 3)) {
      const msgs = await (
        await fetch(`${d.brokerUrl}/messages?query_id=${n}&cursor=0`, { headers: writer() })
      ).json();
      expect((msgs as { total: number }).total, n).toBeGreaterThan(0);
      const evs = await (await fetch(`${d.brokerUrl}/events/${n}?cursor=0`, { headers: writer() })).json();
      expect((evs as { total: number }).total, n).toBeGreaterThan(0);
    }

    type Lease = { spec: { holderIdentity?: string } };
    const holder = async () =>
      (await c.getJson<Lease>(NS, 'lease/berth-controller')).spec.holderIdentity ?? '';
    const leaderPod = (await holder()).split('_')[0] as string;
    const controllers = (await podsOf(d, 'berth-controller')).map((p) => p.name);
    expect(controllers).toContain(leaderPod);

    // The purges answer slowly (the broker has run them by then), so some are in flight at the kill.
    rec.answerDelayMs = 1500;
    await kubectl('delete', 'queries', '-l', 'test.berth.dev/purge=failover', '-n', NS, '--wait=false');
    await eventually(() => rec.purges.size > 0, 30_000, 20);
    const killedAt = Date.now();
    await kubectl('delete', 'pod', leaderPod, '-n', NS, '--wait=false');
    let newHolder = '';
    await eventually(
      async () => {
        newHolder = await holder();
        return newHolder !== '' && !newHolder.startsWith(`${leaderPod}_`);
      },
      15_000,
      100,
    );
    const takeoverMs = Date.now() - killedAt;
    // The standby, or the pod the ReplicaSet started in the leader's place if it asked first (a CI
    // run saw the replacement win): either is a live controller of this Deployment, not the old one.
    const newLeaderPod = newHolder.split('_')[0] as string;
    expect(newLeaderPod).not.toBe(leaderPod);
    const nowControllers = (await podsOf(d, 'berth-controller')).map((p) => p.name);
    expect(nowControllers).toContain(newLeaderPod);
    await c.apply(helperQuery(NS, 'after-failover', 'after the failover'));
    await c.wait(NS, 'query/after-failover', 'jsonpath={.status.phase}=done', '60s');
    const q = await c.getJson<{ status: unknown }>(NS, 'query/after-failover');
    expect(JSON.stringify(q.status)).toContain('cluster echo: after the failover');
    await kubectl(
      'wait',
      '--for=delete',
      'query',
      '-l',
      'test.berth.dev/purge=failover',
      '-n',
      NS,
      '--timeout=120s',
    );
    rec.answerDelayMs = 0;

    // Purged once each: messages (the broker's answers through the recorder), events (its keys).
    const keys = await d.stores.query<{ key: string; status: number | null }>(
      `SELECT key, status FROM berth_idempotency_keys WHERE key LIKE 'DELETE /events/purge-%'`,
    );
    let repeatedRequests = 0;
    for (const n of names) {
      const p = rec.purges.get(n);
      expect(p, `${n}: messages purge`).toBeDefined();
      expect(p?.executed, `${n}: messages purges run`).toBe(1);
      expect([...(p?.keys ?? [])]).toEqual([`berth-purge-${uids.get(n)}-messages`]);
      repeatedRequests += (p?.requests ?? 0) - 1;
      const ev = keys.filter((k) => k.key === `DELETE /events/${n} berth-purge-${uids.get(n)}-events`);
      expect(ev, `${n}: events purge key`).toHaveLength(1);
      expect(ev[0]?.status, `${n}: events purge answered`).toBe(200);
      const msgs = await (
        await fetch(`${d.brokerUrl}/messages?query_id=${n}&cursor=0`, { headers: writer() })
      ).json();
      expect((msgs as { total: number }).total, `${n}: messages left`).toBe(0);
      const evs = await (await fetch(`${d.brokerUrl}/events/${n}?cursor=0`, { headers: writer() })).json();
      expect((evs as { total: number }).total, `${n}: events left`).toBe(0);
    }
    expect((await exitOf(leaderPod))?.code, 'the leader exited by itself').toBe(0);
    report.leaderFailover = {
      takeoverMs,
      newLeader: controllers.includes(newLeaderPod) ? 'standby' : 'replacement pod',
      queries: N,
      purgeRequestsRepeated: repeatedRequests,
      replayedByBroker: [...rec.purges.values()].reduce((a, p) => a + p.replayed, 0),
      seconds: secs(Date.now() - started),
    };
    console.log('controller leader deleted', JSON.stringify(report.leaderFailover));
  }, 300_000);

  it('an API pod deleted ends its open /v1/broker relay with the final frame within the grace period, and exits 0', async () => {
    expect(apiDrain, 'started by the previous test').toBeDefined();
    const { drain, pod } = await (apiDrain as NonNullable<typeof apiDrain>);
    const grace = await graceOf('berth-api');
    expect(drain.error, 'the stream was cut').toBeUndefined();
    expect(drain.clean).toBe(true);
    expect(drain.finalFrameMs).toBeGreaterThanOrEqual(SHUTDOWN_GRACE_MS - 1000);
    expect(drain.endMs).toBeLessThan(grace * 1000);
    const exit = await exitOf(pod);
    expect(exit, `${pod} exited by itself`).toMatchObject({ code: 0 });
    report.apiDrain = { pod, ...drain, exit };
    console.log('API pod deleted', JSON.stringify(report.apiDrain));
  }, 120_000);

  it('`kubectl rollout restart` of every Deployment under a steady chat load: no completion fails beyond what the SDK retries absorb', async () => {
    const started = Date.now();
    let attempts = 0;
    const statuses = new Map<string, number>();
    const client = new OpenAI({
      baseURL: `${d.apiUrl}/compat/v1`,
      apiKey: d.apiKey,
      // Counts every HTTP attempt: attempts beyond the calls are the SDK's retries.
      fetch: async (url, init) => {
        attempts++;
        try {
          const res = await fetch(url, init);
          statuses.set(String(res.status), (statuses.get(String(res.status)) ?? 0) + 1);
          return res;
        } catch (err) {
          statuses.set('network', (statuses.get('network') ?? 0) + 1);
          throw err;
        }
      },
    });
    let calls = 0;
    let ok = 0;
    const failures: string[] = [];
    let stopped = false;
    const failedQueries: string[] = [];
    const loops = Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; !stopped; i++) {
        const text = `chat ${w}-${i}`;
        calls++;
        // The completion's id is its Query's name: a failure names the Query, whose status is shown.
        let id: string | undefined;
        try {
          let content = '';
          if (i % 2 === 0) {
            const res = await client.chat.completions.create({
              model: 'agent/helper',
              messages: [{ role: 'user', content: text }],
            });
            id = res.id;
            content = res.choices[0]?.message.content ?? '';
          } else {
            const stream = await client.chat.completions.create({
              model: 'agent/helper',
              messages: [{ role: 'user', content: text }],
              stream: true,
            });
            for await (const chunk of stream) {
              id ??= chunk.id;
              content += chunk.choices[0]?.delta.content ?? '';
            }
          }
          if (content.includes(`cluster echo: ${text}`)) ok++;
          else failures.push(`${text}: answered ${JSON.stringify(content)}`);
        } catch (err) {
          failures.push(
            `${text} (${i % 2 ? 'stream' : 'plain'}${id ? `, query ${id}` : ''}, at ${new Date().toISOString()}): ${(err as Error).message}`,
          );
          if (id) failedQueries.push(id);
        }
      }
    });
    try {
      await eventually(() => ok >= 20, 60_000, 50);
      const before = { calls, attempts };
      const r0 = Date.now();
      await kubectl('rollout', 'restart', ...BERTH_DEPLOYMENTS.map((n) => `deployment/${n}`), '-n', NS);
      await Promise.all(
        BERTH_DEPLOYMENTS.map((n) =>
          kubectl('rollout', 'status', `deployment/${n}`, '-n', NS, '--timeout=300s'),
        ),
      );
      const rolledMs = Date.now() - r0;
      // Until every replaced pod is gone (the drains end), and some more load after.
      await eventually(
        async () => {
          const pods = await Promise.all(BERTH_DEPLOYMENTS.map((n) => podsOf(d, n)));
          return pods.flat().every((p) => !p.deleting);
        },
        120_000,
        500,
      );
      const settledMs = Date.now() - r0;
      const after = ok;
      await eventually(() => ok >= after + 20, 60_000, 50);
      stopped = true;
      await Promise.all(loops);
      report.chatRollout = {
        calls,
        completed: ok,
        failed: failures.length,
        httpAttempts: attempts,
        sdkRetries: attempts - calls,
        duringRollout: { calls: calls - before.calls, attempts: attempts - before.attempts },
        statuses: Object.fromEntries(statuses),
        rolloutSeconds: secs(rolledMs),
        allOldPodsGoneSeconds: secs(settledMs),
        failures: failures.slice(0, 10),
        seconds: secs(Date.now() - started),
      };
      console.log('rollout restart under chat load', JSON.stringify(report.chatRollout));
      // What a failed completion's Query went through (its phase, conditions and times).
      for (const q of failedQueries.slice(0, 5))
        console.log(
          `failed completion's Query ${q}:`,
          await kubectl('get', 'query', q, '-n', NS, '-o', 'jsonpath={.status}').catch(String),
        );
      // The first failure leads the message: the test runner's summary keeps only its first line.
      expect(failures, `completions failed: ${failures.join(' | ').slice(0, 240)}`).toEqual([]);
      expect(ok).toBe(calls);
    } finally {
      stopped = true;
      await Promise.all(loops);
    }
  }, 400_000);

  it('kept the node under 2 GiB throughout (its processes’ PSS: components, shims, containers)', () => {
    const peak = d.peak();
    // RSS summed over the containers counts the image's Node binary and libraries once per
    // container; PSS shares those pages out. Both reported in the suite's summary line.
    expect(peak.nodePss).toBeGreaterThan(0);
    expect(peak.nodePss).toBeLessThan(2 * 1024 ** 3);
  });
});
