/**
 * BROKER_AUTH=serviceaccount against the real kube-apiserver: real service accounts, real
 * TokenRequest tokens (audience berth-broker, or the API server's), a real `berth broker` process
 * whose only right is the manifests' `create tokenreviews`; then the engine writing a query's chunks,
 * events and messages to that broker with a token file.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OpenAPIHono } from '@hono/zod-openapi';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANNOTATION_STREAMING, type Query } from '../../pkg/api/index.ts';
import { purgeEvents } from '../../pkg/controller/query/purge.ts';
import { singleBrokerRouter } from '../../pkg/engine/brokers.ts';
import { createQueryEngine } from '../../pkg/engine/index.ts';
import type { GatewayDeps } from '../../pkg/gateway/deps.ts';
import { mountBrokerProxy } from '../../pkg/gateway/routes/broker-proxy.ts';
import { BrokerCredentials, ServiceToken } from '../../pkg/http/service-token/index.ts';
import { createLogger } from '../../pkg/log/index.ts';
import { agent, MapLookup, memory, model, query, run } from '../engine/support.ts';
import { type FakeModelServer, startFakeModel } from '../fixtures/fake-model.ts';
import {
  applyRbacOf,
  canI,
  kustomization,
  mustKubectl,
  removeTokenKubeconfigs,
  scratchDir,
  tokenKubeconfig,
} from '../install/support.ts';
import { createNamespace, kubeConfig } from '../support/kube.ts';
import { type Spawned, spawnBerth } from '../support/process.ts';
import { eventually } from '../support/wait.ts';

const procs: Spawned[] = [];
const tmp = mkdtempSync(join(tmpdir(), 'berth-broker-auth-'));
const scratch = scratchDir();
let ctlNs: string;
let tenantA: string;
let tenantB: string;
let brokerKubeconfig: string;
let url: string;
const tokens = { controller: '', reader: '', otherTenant: '', wrongAudience: '' };

const mint = async (sa: string, ns: string, audience?: string) =>
  (
    await mustKubectl([
      'create',
      'token',
      sa,
      '-n',
      ns,
      '--duration',
      '1h',
      ...(audience ? ['--audience', audience] : []),
    ])
  ).trim();

async function startBroker(env: NodeJS.ProcessEnv): Promise<{ p: Spawned; url: string }> {
  const p = spawnBerth(['broker', '--port', '0'], {
    ...process.env,
    LOG_LEVEL: 'info',
    BROKER_AUTH: 'serviceaccount',
    NAMESPACE: tenantA,
    BROKER_WRITER_SUBJECTS: `system:serviceaccount:${ctlNs}:berth-controller`,
    ...env,
  });
  procs.push(p);
  const line = await p.waitForLine(/"msg":"broker listening"/, 30_000);
  return { p, url: `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}` };
}

const call = (path: string, token?: string, init: RequestInit = {}) =>
  fetch(`${url}${path}`, {
    ...init,
    headers: {
      ...(init.body ? { 'content-type': 'application/json' } : {}),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
  });
let conversationId = '';
const postMessage = (token: string | undefined, queryId: string) =>
  call('/messages', token, {
    method: 'POST',
    body: JSON.stringify({
      conversation_id: conversationId,
      query_id: queryId,
      messages: [{ role: 'user', content: `hi from ${queryId}` }],
    }),
  });
/** Every message the broker holds, as text (GET /messages without a conversation lists them all). */
const allMessages = async (token: string) => JSON.stringify(await (await call('/messages', token)).json());

let broker: Spawned;

beforeAll(async () => {
  [ctlNs, tenantA, tenantB] = await Promise.all([
    createNamespace('bauth-ctl'),
    createNamespace('bauth-a'),
    createNamespace('bauth-b'),
  ]);
  // The broker's identity exactly as manifests/base/broker grants it (names suffixed: ClusterRoles are global).
  const suffix = `-${tenantA.slice(-6)}`;
  const dir = kustomization(
    scratch.dir,
    tenantA,
    'base/broker',
    `namespace: ${tenantA}\nnameSuffix: "${suffix}"\n`,
  );
  const rbac = await applyRbacOf(dir);
  expect(rbac.find((o) => o.kind === 'ClusterRole')?.rules).toEqual([
    { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
  ]);
  const brokerIdentity = await tokenKubeconfig(`berth-broker${suffix}`, tenantA);
  brokerKubeconfig = brokerIdentity.path;
  // RBAC reaches the API server's authorizer a moment after it is applied.
  await eventually(() => canI(brokerIdentity.kc, 'create tokenreviews.authentication.k8s.io'), 20_000, 100);
  await Promise.all([
    mustKubectl(['create', 'serviceaccount', 'berth-controller', '-n', ctlNs]),
    mustKubectl(['create', 'serviceaccount', 'berth-api', '-n', tenantA]),
    mustKubectl(['create', 'serviceaccount', 'berth-api', '-n', tenantB]),
  ]);
  [tokens.controller, tokens.reader, tokens.otherTenant, tokens.wrongAudience] = await Promise.all([
    mint('berth-controller', ctlNs, 'berth-broker'),
    mint('berth-api', tenantA, 'berth-broker'),
    mint('berth-api', tenantB, 'berth-broker'),
    mint('berth-controller', ctlNs), // the API server's audience: not for the broker
  ]);
  const started = await startBroker({ KUBECONFIG: brokerKubeconfig });
  broker = started.p;
  url = started.url;
});

afterAll(async () => {
  for (const p of procs) p.proc.kill('SIGTERM');
  await Promise.all(procs.map((p) => p.exited));
  rmSync(tmp, { recursive: true, force: true });
  scratch.remove();
  // The broker's kubeconfig holds a token: a credential is not left in /tmp.
  removeTokenKubeconfigs();
});

describe('berth broker with BROKER_AUTH=serviceaccount (real API server, real tokens)', () => {
  it('leaves health, readiness, metrics and docs open', async () => {
    for (const path of ['/health', '/healthz', '/readyz', '/metrics', '/openapi.json', '/api-docs'])
      expect((await call(path)).status, path).toBe(200);
  });

  it('answers 401 without a token, with a forged one and with a token of another audience', async () => {
    for (const token of [undefined, 'not-a-jwt', tokens.wrongAudience]) {
      for (const res of [await call('/messages', token), await postMessage(token, 'q-401')]) {
        expect(res.status).toBe(401);
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
      }
    }
  });

  it('lets the controller write and purge; the tenant reads but may not write; another tenant gets 403', async () => {
    const created = await call('/conversations', tokens.controller, { method: 'POST', body: '{}' });
    expect(created.status).toBe(201);
    conversationId = ((await created.json()) as { conversation_id: string }).conversation_id;
    const written = await postMessage(tokens.controller, 'support-1');
    expect(written.status).toBe(201);
    expect((await call('/messages', tokens.reader)).status).toBe(200);
    expect(await allMessages(tokens.reader)).toContain('hi from support-1');

    for (const res of [
      await postMessage(tokens.reader, 'injected'),
      await call('/queries/support-1/messages', tokens.reader, { method: 'DELETE' }),
      await call('/stream/support-1', tokens.reader, { method: 'POST', body: '{}' }),
    ])
      expect(res.status).toBe(403);

    for (const res of [
      await call('/messages', tokens.otherTenant),
      await call('/stream/support-1?from-beginning=true', tokens.otherTenant),
      await postMessage(tokens.otherTenant, 'injected'),
      await call('/queries/support-1/messages', tokens.otherTenant, { method: 'DELETE' }),
    ]) {
      expect(res.status).toBe(403);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('forbidden');
    }

    const purged = await call('/queries/support-1/messages', tokens.controller, { method: 'DELETE' });
    expect(purged.status).toBeLessThan(300);
    const after = (await (await call('/messages?queryId=support-1', tokens.reader)).json()) as {
      items: unknown[];
    };
    expect(after.items).toEqual([]);
  });

  it('never logs a token', () => {
    for (const t of Object.values(tokens)) expect(broker.output()).not.toContain(t);
  });

  it('answers 503 when the API server cannot be reached, and 401/200 again is not cached from it', async () => {
    // A kubeconfig whose server refuses connections: the broker cannot review any token.
    const closed = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const port = (s.address() as { port: number }).port;
        s.close(() => resolve(port));
      });
    });
    const kc = new KubeConfig();
    const cluster = kubeConfig().getCurrentCluster();
    kc.loadFromOptions({
      clusters: [{ name: 'down', server: `https://127.0.0.1:${closed}`, caData: cluster?.caData }],
      users: [{ name: 'u', token: 'x' }],
      contexts: [{ name: 'down', cluster: 'down', user: 'u' }],
      currentContext: 'down',
    });
    const path = join(tmp, 'down-kubeconfig');
    writeFileSync(path, kc.exportConfig(), { mode: 0o600 });
    const down = await startBroker({ KUBECONFIG: path });
    const res = await fetch(`${down.url}/messages`, {
      headers: { authorization: `Bearer ${tokens.reader}` },
    });
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('auth_unavailable');
    expect((await fetch(`${down.url}/messages`)).status).toBe(401);
    expect((await fetch(`${down.url}/readyz`)).status).toBe(200);
  });
});

describe('the engine against an authenticating broker (token file, as the manifests mount it)', () => {
  let fake: FakeModelServer;
  beforeAll(async () => {
    fake = await startFakeModel();
  });
  afterAll(async () => fake?.close());

  it('writes a query’s chunks, events and messages with the controller token; the tenant reads them', async () => {
    const file = join(tmp, 'token');
    writeFileSync(file, `${tokens.controller}\n`);
    const lookup = new MapLookup()
      .put('memory', memory('default', url))
      .put('model', model('default', { baseUrl: fake.url }))
      .put('agent', agent('helper', { modelRef: { name: 'default' } }));
    fake.script('default', { reply: 'authenticated hello' });
    const engine = createQueryEngine({
      lookup,
      ca: fake.ca,
      brokerUrl: url,
      maxRetries: 0,
      env: { BROKER_TOKEN_FILE: file },
      logger: createLogger({ level: 'silent' }),
    });
    try {
      const q = query({ type: 'agent', name: 'helper' }, 'hello?', {
        annotations: { [ANNOTATION_STREAMING]: 'true' },
      });
      const out = await engine.run(q, run());
      expect(out).toMatchObject({ phase: 'done', content: 'authenticated hello' });
      await engine.flush();
      const name = q.metadata.name;
      const stream = await (await call(`/stream/${name}?from-beginning=true`, tokens.reader)).text();
      expect(stream).toContain('authenticated');
      expect(stream).toContain('[DONE]');
      const events = (await (await call(`/events/${name}`, tokens.reader)).json()) as { items: unknown[] };
      expect(events.items.length).toBeGreaterThan(0);
      // The memory contract's calls (conversation, append) went to the broker with the token too.
      expect(await allMessages(tokens.reader)).toContain('authenticated hello');
      // Without the file, the same engine's writes are refused: the token is what let them in.
      expect((await postMessage(undefined, name)).status).toBe(401);
    } finally {
      await engine.close();
    }
  });
});

describe('the other clients send their token', () => {
  it('the Query purge deletes events with the controller token (and is refused without it)', async () => {
    const file = join(tmp, 'purge-token');
    writeFileSync(file, tokens.controller);
    const posted = await call('/events', tokens.controller, {
      method: 'POST',
      body: JSON.stringify({ reason: 'QueryStart', data: { queryId: 'purge-me' } }),
    });
    expect(posted.status).toBeLessThan(300);
    const q = { metadata: { name: 'purge-me', namespace: tenantA, uid: 'u-1' } } as Query;
    const deps = { reader: {} as never, brokerUrl: url, timeoutMs: 5_000 };
    const anonymous = await purgeEvents(
      {
        ...deps,
        brokers: singleBrokerRouter(
          url,
          tenantA,
          new BrokerCredentials(new ServiceToken(join(tmp, 'absent')), [url]),
        ),
      },
      q,
      new AbortController().signal,
    );
    expect(anonymous).toMatchObject({ done: false, error: 'HTTP 401' });
    const step = await purgeEvents(
      {
        ...deps,
        brokers: singleBrokerRouter(url, tenantA, new BrokerCredentials(new ServiceToken(file), [url])),
      },
      q,
      new AbortController().signal,
    );
    expect(step).toMatchObject({ done: true });
    const left = (await (await call('/events/purge-me', tokens.reader)).json()) as { items: unknown[] };
    expect(left.items).toEqual([]);
  });

  it("the API's /v1/broker proxy reads with the API account's token from BROKER_TOKEN_FILE", async () => {
    const file = join(tmp, 'api-token');
    writeFileSync(file, tokens.reader);
    const before = process.env.BROKER_TOKEN_FILE;
    process.env.BROKER_TOKEN_FILE = file;
    try {
      const app = new OpenAPIHono();
      const logger = createLogger({ level: 'silent' });
      mountBrokerProxy(app, { brokerUrl: url, logger } as GatewayDeps);
      const res = await app.request('/v1/broker/messages');
      expect(res.status).toBe(200);
      // A client's own Authorization is not what reaches the broker.
      const forged = await app.request('/v1/broker/messages', {
        headers: { authorization: 'Bearer forged' },
      });
      expect(forged.status).toBe(200);
    } finally {
      if (before === undefined) delete process.env.BROKER_TOKEN_FILE;
      else process.env.BROKER_TOKEN_FILE = before;
    }
  });
});
