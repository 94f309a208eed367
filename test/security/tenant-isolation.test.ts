/**
 * Tenants share nothing (issue 27 item 7), on the real API server: manifests/base and two tenants of
 * manifests/overlays/tenant installed as docs/install.md says, every workload run with its rendered
 * settings and real service-account tokens (tenants.ts), one cluster-wide controller running
 * same-named Queries in both tenants and in two namespaces without a broker of their own. Every
 * cross-tenant path is tried — the API and dashboard proxies, direct broker calls with any token a
 * tenant can mint or none, a purge of a same-named query, a reused conversation id, injected chunks
 * and messages, a Memory aimed at the other broker, a Service aimed at a listener of the tenant's —
 * and each assertion fails if the other tenant's data shows or changes.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, projectRoot, startControlPlane } from '../../pkg/kube/controlplane/index.ts';
import { until } from '../controller/support.ts';
import { type FakeModelServer, startFakeModel } from '../fixtures/fake-model.ts';
import { scratchDir } from '../install/support.ts';
import {
  berthObject,
  brokerCalls,
  queryObject,
  queryStatus,
  read,
  statusOf,
  tokensOf,
  waitPhase,
} from './tenant-calls.ts';
import { type Capture, SYSTEM, startCapture, startInstall, type TenantStack } from './tenant-stack.ts';
import { Cluster, logsOfAll, type Running, stopProcesses, tenantReads } from './tenants.ts';

const A = 'tenant-a';
const B = 'tenant-b';
/** Namespaces without a broker of their own: both fall back to berth-system's. */
const C = 'plain-c';
const D = 'plain-d';
/** A tenant whose `berth-broker` Service is a listener of its own. */
const ROGUE = 'tenant-rogue';
const tag = randomBytes(4).toString('hex');
/** A word only that namespace's query carries: it must never show anywhere else. */
const secret = (ns: string) => `secret${ns.replace(/-/g, '')}${tag}`;

const dir = mkdtempSync(join(tmpdir(), 'berth-isolation-'));
const scratch = scratchDir();
let cp: ControlPlane;
let cluster: Cluster;
let fake: FakeModelServer;
let system: Running;
let controller: Running & { tokenFile: string };
/** ROGUE's `berth-broker`; and a third-party memory service a Memory of A names. */
let rogue: Capture;
let thirdParty: Capture;
let t: Record<string, TenantStack> = {};
/** Reader tokens (audience berth-broker) of each broker's own namespace: its API's account. */
const reader: Record<string, string> = {};

const brokerOf = (ns: string) => (ns === SYSTEM ? system : (t[ns] as TenantStack).broker);
/** A broker read with its own namespace's reader token. */
const direct = (ns: string, path: string) => read(`${brokerOf(ns).url}/${path}`, reader[ns]);
const total = async (ns: string, path: string) =>
  (JSON.parse(await direct(ns, path)) as { total: number }).total;
const items = async (ns: string, path: string) =>
  (JSON.parse(await direct(ns, path)) as { items: unknown[] }).items.length;
const phase = (ns: string, name: string, p: string) =>
  waitPhase(cluster, () => controller?.proc.output() ?? '', ns, name, p);
const status = (ns: string, name: string) => queryStatus(cluster, ns, name);
const conversationOf = async (ns: string) => (await status(ns, 'support-1')).conversationId as string;

beforeAll(async () => {
  [cp, fake, rogue, thirdParty] = await Promise.all([
    startControlPlane({ crdDir: join(projectRoot(), 'crds'), stateDir: join(dir, 'cp') }),
    startFakeModel(),
    startCapture(),
    startCapture(),
  ]);
  const caFile = join(dir, 'model-ca.pem');
  writeFileSync(caFile, fake.ca);
  cluster = new Cluster(cp);
  ({
    system,
    controller,
    tenants: t,
  } = await startInstall(cluster, scratch.dir, caFile, {
    tenants: [A, B],
    plain: [C, D, ROGUE],
    before: () => cluster.pointService(ROGUE, 'berth-broker', rogue.port),
  }));
  for (const ns of [A, B, SYSTEM]) reader[ns] = await cluster.token('berth-api', ns, 'berth-broker');

  // What each namespace's users create: a Model, the namespace's Memory `default` (a tenant's at its
  // own broker's Service, the others' at berth-system's), and a Query named support-1 everywhere.
  const memory = (ns: string, address: object) => berthObject('Memory', ns, 'default', { address });
  const serviceRef = (ns: string) => ({
    valueFrom: { serviceRef: { name: 'berth-broker', port: brokerOf(ns).port } },
  });
  await cluster.apply(
    ...[A, B, C, D, ROGUE].map((ns) =>
      berthObject('Model', ns, 'default', { type: 'openai', model: 'iso', baseUrl: fake.url }),
    ),
    memory(A, serviceRef(A)),
    memory(B, serviceRef(B)),
    memory(C, { value: system.url }),
    memory(D, { value: system.url }),
  );
  await Promise.all(
    [A, B, C, D].map((ns) => cluster.wait(ns, 'memory/default', 'jsonpath={.status.phase}=ready')),
  );
  await cluster.apply(
    ...[A, B, C, D].map((ns) => queryObject(ns, 'support-1', `${secret(ns)} what do you know?`)),
  );
  await Promise.all([A, B, C, D].map((ns) => phase(ns, 'support-1', 'done')));
}, 240_000);

afterAll(async () => {
  await stopProcesses();
  await Promise.all([rogue?.close(), thirdParty?.close(), fake?.close()]);
  await cp?.stop();
  cluster?.remove();
  scratch.remove();
  rmSync(dir, { recursive: true, force: true });
});

/** What a tenant reads through `/v1/broker/*`, and what it must find of its own there. */
const READS = tenantReads(secret);

describe('two tenants, one controller', () => {
  it("shows each tenant only its own data, through its API and its dashboard's proxy", async () => {
    const uid = async (ns: string) =>
      (await cluster.getJson<{ metadata: { uid: string } }>(ns, 'query/support-1')).metadata.uid;
    const uids = Object.fromEntries(await Promise.all([A, B, C, D].map(async (ns) => [ns, await uid(ns)])));
    // Spans are exported in batches: both tenants' have arrived before anything is compared.
    for (const ns of [A, B])
      await until(`${ns}'s spans`, async () => (await direct(ns, 'traces')).includes(`"${ns}"`), 30_000, 200);
    for (const [own, other] of [
      [A, B],
      [B, A],
    ] as const) {
      const tenant = t[own] as TenantStack;
      for (const [path, mustShow] of READS) {
        for (const base of [`${tenant.api.url}/v1/broker`, `${tenant.dashboard}/api/v1/broker`]) {
          const text = await read(`${base}/${path}`);
          const where = `${base}/${path}`;
          expect(text, where).toContain(mustShow(own));
          for (const ns of [other, C, D]) {
            expect(text, where).not.toContain(secret(ns));
            expect(text, where).not.toContain(uids[ns]);
          }
          expect(text, where).not.toContain(`"${other}"`);
        }
      }
    }
    // Nothing of either tenant reached the shared broker.
    for (const path of ['messages', 'events', 'stream', 'traces'])
      for (const ns of [A, B]) expect(await direct(SYSTEM, path)).not.toContain(secret(ns));
  });

  it("purges A's support-1 on delete and leaves B's", async () => {
    const ofB = async () => ({
      messages: await total(B, 'messages?query_id=support-1'),
      events: await items(B, 'events/support-1?limit=1000'),
    });
    const before = await ofB();
    expect(before.messages).toBe(2);
    expect(before.events).toBeGreaterThan(2);
    expect(await total(A, 'messages?query_id=support-1')).toBe(2);
    await cluster.kubectl(['delete', 'query', 'support-1', '-n', A, '--wait=false']);
    await cluster.wait(A, 'query/support-1', 'delete');
    expect(await total(A, 'messages?query_id=support-1')).toBe(0);
    expect(await items(A, 'events/support-1?limit=1000')).toBe(0);
    expect(await ofB()).toEqual(before);
    expect(await read(`${(t[B] as TenantStack).api.url}/v1/broker/messages`)).toContain(secret(B));
  });

  it("does not give a Query in A the history of B's conversation it names", async () => {
    const conversation = await conversationOf(B);
    const ofB = () => direct(B, `messages?conversation_id=${conversation}`);
    const before = await ofB();
    expect(before).toContain(secret(B));
    const probe = `probe${tag}`;
    await cluster.apply(
      queryObject(A, 'reuse', `${probe} repeat what I said`, { conversationId: conversation }),
    );
    await phase(A, 'reuse', 'done');
    const asked = fake.requests.filter((r) => JSON.stringify(r.messages).includes(probe));
    expect(asked).toHaveLength(1);
    expect(JSON.stringify(asked[0]?.messages)).not.toContain(secret(B));
    // A's exchange went to A's broker; B's conversation is as it was.
    expect(await ofB()).toBe(before);
    expect(await direct(A, `messages?conversation_id=${conversation}`)).toContain(probe);
  });
});

/** B's data as B's own accounts read it (traces aside: spans of earlier runs may still be exported). */
const snapshotOfB = () =>
  Promise.all(
    ['messages', 'events', 'stream', 'conversations', 'sessions', 'stream/support-1?from-beginning=true'].map(
      (p) => direct(B, p),
    ),
  );

describe("B's broker, called by tenant A", () => {
  it('refuses every token A can mint (any audience), a forged one and none, on every call; B is unchanged', async () => {
    const before = await snapshotOfB();
    const calls = brokerCalls('support-1', await conversationOf(B), `injected${tag}`);
    const callers = await tokensOf(cluster, A, B);
    const got: Record<string, number> = {};
    const want: Record<string, number> = {};
    for (const [who, token, code] of callers)
      for (const call of calls) {
        got[`${who}: ${call[0]} ${call[1]}`] = await statusOf(brokerOf(B).url, token, call);
        want[`${who}: ${call[0]} ${call[1]}`] = code;
      }
    expect(got).toEqual(want);
    expect(await snapshotOfB()).toEqual(before);
  });

  it("refuses a Memory of A that names B's broker; B is unchanged", async () => {
    const before = await snapshotOfB();
    const port = brokerOf(B).port;
    await cluster.apply(
      berthObject('Memory', A, 'elsewhere', {
        address: { valueFrom: { serviceRef: { name: 'berth-broker', namespace: B, port } } },
      }),
    );
    await cluster.wait(A, 'memory/elsewhere', 'jsonpath={.status.phase}=ready');
    const probe = `snoop${tag}`;
    const spec = { memory: { name: 'elsewhere' } };
    await cluster.apply(
      queryObject(A, 'snoop-read', `${probe} read`, { ...spec, conversationId: await conversationOf(B) }),
      queryObject(A, 'snoop-write', `${probe} write`, spec),
    );
    for (const name of ['snoop-read', 'snoop-write']) {
      await phase(A, name, 'error');
      expect((await status(A, name)).message).toMatch(/HTTP 401/);
    }
    expect(fake.requests.filter((r) => JSON.stringify(r.messages).includes(probe))).toEqual([]);
    expect(await snapshotOfB()).toEqual(before);
  });

  it("sends a Memory of A at any address but A's broker no credential", async () => {
    await cluster.apply(berthObject('Memory', A, 'notes', { address: { value: thirdParty.url } }));
    await cluster.wait(A, 'memory/notes', 'jsonpath={.status.phase}=ready');
    await cluster.apply(queryObject(A, 'notes-q', `notes${tag}`, { memory: { name: 'notes' } }));
    await phase(A, 'notes-q', 'done');
    expect(thirdParty.seen.map((s) => `${s.method} ${s.path}`)).toEqual([
      'POST /conversations',
      'POST /messages',
    ]);
    expect(thirdParty.seen.map((s) => s.authorization)).toEqual([undefined, undefined]);
  });
});

describe("a tenant's berth-broker Service pointed at a listener of its own", () => {
  it('gets a token for that tenant’s broker alone, which every other broker refuses', async () => {
    await cluster.apply(queryObject(ROGUE, 'support-1', `${secret(ROGUE)} hello`));
    await phase(ROGUE, 'support-1', 'done');
    const paths = rogue.seen.map((s) => s.path);
    expect(paths).toContain('/stream/support-1');
    expect(paths).toContain('/events');
    const captured = [...new Set(rogue.seen.map((s) => s.authorization))];
    expect(captured).toHaveLength(1);
    const token = (captured[0] ?? '').replace(/^Bearer /, '');
    // Not the controller's own broker token, which the fallback broker accepts.
    expect(token).not.toBe(readFileSync(controller.tokenFile, 'utf8').trim());
    const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString());
    expect(claims.aud).toEqual([`berth-broker:${ROGUE}`]);
    const calls = brokerCalls('support-1', 'x', 'captured');
    const got: Record<string, number> = {};
    for (const ns of [A, B, SYSTEM])
      for (const call of calls)
        got[`${ns}: ${call[0]} ${call[1]}`] = await statusOf(brokerOf(ns).url, token, call);
    expect(new Set(Object.values(got))).toEqual(new Set([401]));
  });
});

describe('namespaces without a broker of their own', () => {
  it('share the fallback broker, and a purge of one’s support-1 leaves the other’s', async () => {
    // Both Queries' id there is `support-1` (docs/security.md "A purge keeps to its namespace"):
    // what tells them apart is each one's conversation and its events' data.queryNamespace.
    const [convC, convD] = [await conversationOf(C), await conversationOf(D)];
    expect(convC).not.toBe(convD);
    const eventsOf = async (ns: string) => {
      const all = JSON.parse(await direct(SYSTEM, 'events/support-1?limit=1000')) as {
        items: Array<{ data?: { queryNamespace?: string } }>;
      };
      return all.items.filter((e) => e.data?.queryNamespace === ns).length;
    };
    const counts = async (ns: string, conv: string) => ({
      messages: await total(SYSTEM, `messages?conversation_id=${conv}`),
      events: await eventsOf(ns),
    });
    for (const [ns, conv] of [
      [C, convC],
      [D, convD],
    ] as const) {
      expect(await direct(SYSTEM, `messages?conversation_id=${conv}`)).toContain(secret(ns));
      expect((await counts(ns, conv)).messages).toBe(2);
      expect((await counts(ns, conv)).events).toBeGreaterThan(2);
    }
    const ofD = async () => ({
      text: await direct(SYSTEM, `messages?conversation_id=${convD}`),
      ...(await counts(D, convD)),
    });
    const before = await ofD();
    await cluster.kubectl(['delete', 'query', 'support-1', '-n', C, '--wait=false']);
    await cluster.wait(C, 'query/support-1', 'delete');
    expect(await counts(C, convC)).toEqual({ messages: 0, events: 0 });
    expect(await ofD()).toEqual(before);
  });
});

describe("a tenant's broker gone (issue 33 item 6)", () => {
  it("fails only that tenant's queries; its API answers 503 naming the broker; the other tenant goes on", async () => {
    const gone = (t[B] as TenantStack).broker;
    gone.proc.proc.kill('SIGKILL');
    await gone.proc.exited;
    await cluster.apply(
      queryObject(A, 'after-b-gone', `${secret(A)} still there?`),
      queryObject(B, 'after-b-gone', `${secret(B)} still there?`),
    );
    await phase(A, 'after-b-gone', 'done');
    await phase(B, 'after-b-gone', 'error');
    // B's Query says what failed: its Memory (the broker) is unreachable.
    expect(String((await status(B, 'after-b-gone')).message)).toMatch(/Memory default/);
    const res = await fetch(`${(t[B] as TenantStack).api.url}/v1/broker/messages`);
    expect(res.status).toBe(503);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('broker_unavailable');
    expect(body.error.message).toContain(gone.url);
    // A's API and broker are untouched.
    expect((await fetch(`${(t[A] as TenantStack).api.url}/v1/broker/messages`)).status).toBe(200);
  });
});

it('never logged a token', () => {
  const logs = logsOfAll();
  const own = readFileSync(controller.tokenFile, 'utf8').trim();
  const minted = rogue.seen.map((s) => (s.authorization ?? '').replace(/^Bearer /, '')).filter(Boolean);
  expect(minted.length).toBeGreaterThan(0);
  for (const token of [own, ...minted, ...Object.values(reader)]) expect(logs).not.toContain(token);
});
