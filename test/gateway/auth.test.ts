import { generateKeyPairSync } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHARED_CACHE } from '../../pkg/api/index.ts';
import type { AuthMode } from '../../pkg/auth/index.ts';
import { InformerCache } from '../../pkg/kube/cache.ts';
import { projectRoot } from '../../pkg/kube/controlplane/index.ts';
import { captureLogs } from '../auth/support.ts';
import { type OidcFixture, startOidcProvider } from '../fixtures/oidc/provider.ts';
import { createNamespace, kubeConfig, kubectl } from '../support/kube.ts';
import { basic, client, startService, type TestService } from './support.ts';

const AUD = 'https://berth.test/gw';
const MODES = ['open', 'basic', 'sso', 'hybrid'] as const;
// Every log line of every instance in this file, at trace level (the access log then includes
// request headers), so the redaction check below proves scrubbing rather than silence.
const logs = captureLogs();
const secrets: string[] = [];
const svc = {} as Record<AuthMode, TestService>;
const stops: Array<() => Promise<void>> = [];
let idp: OidcFixture;
let nsA: string;
let nsB: string;
let instanceB: TestService;
let keyA: { public_key: string; secret_key: string };
let keyB: { public_key: string; secret_key: string };
const OIDC_CLIENT_SECRET = `oidc-client-secret-${crypto.randomUUID()}`;

beforeAll(async () => {
  [nsA, nsB] = await Promise.all([createNamespace('gw-auth-a'), createNamespace('gw-auth-b')]);
  idp = await startOidcProvider();
  stops.push(idp.close);
  const env = (mode: string) => ({
    AUTH_MODE: mode,
    OIDC_ISSUER_URL: idp.issuer,
    OIDC_APPLICATION_ID: AUD,
    OIDC_CLIENT_SECRET,
  });
  const cache = InformerCache.of(
    { kc: kubeConfig('gateway'), namespace: nsA, logger: logs.logger },
    SHARED_CACHE,
  );
  cache.start();
  await cache.waitForSync(30_000);
  stops.push(() => cache.stop());
  for (const mode of MODES) {
    svc[mode] = await startService({ namespace: nsA, env: env(mode), logger: logs.logger, cache });
    stops.push(svc[mode].close);
  }
  instanceB = await startService({ namespace: nsB, env: env('hybrid'), logger: logs.logger });
  stops.push(instanceB.close);
  const created = await client(svc.open.url).post('/v1/api-keys', { name: 'a' });
  expect(created.status, created.text).toBe(201);
  keyA = created.body;
  const jwt = await idp.token(AUD);
  const createdB = await client(instanceB.url, { authorization: `Bearer ${jwt}` }).post('/v1/api-keys', {
    name: 'b',
  });
  expect(createdB.status, createdB.text).toBe(201);
  keyB = createdB.body;
  secrets.push(keyA.secret_key, keyB.secret_key, OIDC_CLIENT_SECRET);
  // The token acts as `oidc:` + its sub (the default OIDC_USERNAME_PREFIX).
  await bindMarketplaceRoles(
    nsA,
    `oidc:${JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString()).sub}`,
  );
}, 120_000);

/**
 * The marketplace acts as the token's own user (impersonation), whom RBAC knows nothing about
 * until bound: the manifests' editor and viewer Roles are bound to it in namespace A.
 */
async function bindMarketplaceRoles(ns: string, user: string) {
  for (const role of ['editor', 'viewer']) {
    const file = join(projectRoot(), 'manifests', 'overlays', 'tenant', `marketplace-${role}.yaml`);
    const made = await kubectl(['apply', '-n', ns, '-f', file]);
    expect(made.code, made.stderr).toBe(0);
    const bound = await kubectl([
      'create',
      'rolebinding',
      `mp-${role}`,
      '-n',
      ns,
      `--role=berth-marketplace-${role}`,
      `--user=${user}`,
    ]);
    expect(bound.code, bound.stderr).toBe(0);
  }
}

afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
});

/** The principal the access log recorded for a request id. */
function principalOf(requestId: string | null): string | undefined {
  const line = logs.lines.find(
    (l) => l.includes(`"requestId":"${requestId}"`) && l.includes('"msg":"request"'),
  );
  return line ? JSON.parse(line).principal : undefined;
}

describe('every mode × every credential kind through the real service', () => {
  it('accepts or refuses exactly as the mode says, on resources, API keys and /compat/v1', async () => {
    const token = await idp.token(AUD);
    const wrongAud = await idp.token('https://elsewhere.test');
    const expired = await idp.signWithProviderKey(
      { aud: AUD, sub: 'old' },
      Math.floor(Date.now() / 1000) - 60,
    );
    const pair = `${keyA.public_key}:${keyA.secret_key}`;
    const wrong = `sk-svc-${'A'.repeat(43)}`;
    const creds: Record<string, Record<string, string>> = {
      none: {},
      basic: { authorization: basic(keyA.public_key, keyA.secret_key) },
      'x-api-key': { 'x-api-key': pair },
      'bearer-key': { authorization: `Bearer ${pair}` },
      jwt: { authorization: `Bearer ${token}` },
      'wrong-secret': { authorization: basic(keyA.public_key, wrong) },
      'wrong-aud': { authorization: `Bearer ${wrongAud}` },
      expired: { authorization: `Bearer ${expired}` },
    };
    const accepts: Record<AuthMode, string[]> = {
      open: Object.keys(creds),
      basic: ['basic', 'x-api-key', 'bearer-key'],
      sso: ['jwt'],
      hybrid: ['basic', 'x-api-key', 'bearer-key', 'jwt'],
    };
    const paths = [
      `/v1/namespaces/${nsA}/agents`,
      '/v1/api-keys',
      '/compat/v1/models',
      '/v1/broker/messages',
    ];
    for (const mode of MODES)
      for (const [kind, headers] of Object.entries(creds))
        for (const path of paths) {
          const res = await fetch(`${svc[mode].url}${path}`, { headers });
          const label = `${mode} × ${kind} × ${path}`;
          if (!accepts[mode].includes(kind)) {
            expect(res.status, label).toBe(401);
            expect(res.headers.get('www-authenticate'), label).toBeTruthy();
            expect((await res.json()).error.code, label).toBe('unauthorized');
            continue;
          }
          // The broker proxy answers 503 (no broker) only once authentication let the call through.
          expect(res.status, label).toBe(path.startsWith('/v1/broker') ? 503 : 200);
          if (path.startsWith('/v1/namespaces')) {
            const who = principalOf(res.headers.get('x-request-id'));
            const want = mode === 'open' ? 'anonymous' : kind === 'jwt' ? idp.clientId : keyA.public_key;
            expect(who, label).toBe(want);
          }
          await res.body?.cancel();
        }
  });

  it('guards every documented route in every mode, and lets valid credentials through', async () => {
    const doc = await (await fetch(`${svc.open.url}/openapi.json`)).json();
    const token = await idp.token(AUD);
    const good: Record<AuthMode, Record<string, string>> = {
      open: {},
      basic: { authorization: basic(keyA.public_key, keyA.secret_key) },
      sso: { authorization: `Bearer ${token}` },
      hybrid: { 'x-api-key': `${keyA.public_key}:${keyA.secret_key}` },
    };
    const failures: string[] = [];
    let checked = 0;
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, unknown>>))
      for (const method of Object.keys(ops)) {
        // Placeholders that exist nowhere: writes with an empty body are refused, never applied.
        const url = path.replace('{namespace}', nsA).replace(/\{\w+\}/g, 'zz-none');
        const hasBody = method !== 'get' && method !== 'delete';
        for (const mode of MODES) {
          const call = (headers: Record<string, string>) =>
            fetch(`${svc[mode].url}${url}`, {
              method: method.toUpperCase(),
              headers: { ...headers, ...(hasBody ? { 'content-type': 'application/json' } : {}) },
              body: hasBody ? '{}' : undefined,
            });
          const anon = await call({});
          await anon.body?.cancel();
          if (mode !== 'open' && anon.status !== 401)
            failures.push(`${mode} ${method} ${url} anonymous: ${anon.status}`);
          const authed = await call(good[mode]);
          await authed.body?.cancel();
          const brokerless = url.startsWith('/v1/broker') && authed.status === 503;
          if (authed.status === 401 || authed.status === 403 || (authed.status >= 500 && !brokerless))
            failures.push(`${mode} ${method} ${url} authenticated: ${authed.status}`);
          checked++;
        }
      }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(200);
  });

  it('keeps /health, /docs and /openapi.json public in every mode', async () => {
    for (const mode of MODES)
      for (const path of ['/health', '/docs', '/openapi.json'])
        expect((await fetch(`${svc[mode].url}${path}`)).status, `${mode} ${path}`).toBe(200);
  });

  it('refuses client Impersonate-* headers in every mode, even with valid credentials', async () => {
    const token = await idp.token(AUD);
    for (const mode of MODES)
      for (const header of ['impersonate-user', 'impersonate-group', 'impersonate-extra-scopes']) {
        const res = await client(svc[mode].url, {
          authorization: mode === 'basic' ? basic(keyA.public_key, keyA.secret_key) : `Bearer ${token}`,
          [header]: 'system:admin',
        }).get(`/v1/namespaces/${nsA}/secrets`);
        expect(res.status, `${mode} ${header}`).toBe(403);
        expect(res.body.error.code).toBe('impersonation_forbidden');
      }
  });

  it("rejects namespace A's keys at the instance of namespace B, which accepts its own", async () => {
    const b = (pk: string, sk: string) => client(instanceB.url, { authorization: basic(pk, sk) });
    const foreign = await b(keyA.public_key, keyA.secret_key).get(`/v1/namespaces/${nsB}/agents`);
    expect(foreign.status).toBe(401);
    expect((await b(keyB.public_key, keyB.secret_key).get(`/v1/namespaces/${nsB}/agents`)).status).toBe(200);
    // And B's key is unknown in A.
    const back = await client(svc.basic.url, { authorization: basic(keyB.public_key, keyB.secret_key) }).get(
      '/v1/api-keys',
    );
    expect(back.status).toBe(401);
  });

  it('a revoked key stops working at once', async () => {
    const open = client(svc.open.url);
    const k = (await open.post('/v1/api-keys', { name: 'short-lived' })).body;
    secrets.push(k.secret_key);
    const as = client(svc.basic.url, { authorization: basic(k.public_key, k.secret_key) });
    expect((await as.get(`/v1/namespaces/${nsA}/agents`)).status).toBe(200);
    expect((await as.del(`/v1/api-keys/${k.public_key}`)).status).toBe(204);
    expect((await as.get(`/v1/namespaces/${nsA}/agents`)).status).toBe(401);
    const listed = (await open.get('/v1/api-keys')).body.items.find(
      (i: any) => i.public_key === k.public_key,
    );
    expect(listed.is_active).toBe(false);
  });
});

describe('log redaction over the whole service', () => {
  it('no secret used in this file appears in any log line', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const providerKey = `sk-proj-${'Q7wE9rT2yU4iO6pA8sD1fG3hJ5kL0zX'}${crypto.randomUUID().replaceAll('-', '')}`;
    const anthropicKey = `sk-ant-api03-${crypto.randomUUID().replaceAll('-', '')}AbCdEfGh`;
    const pemBody = pem.split('\n')[5] ?? '';
    secrets.push(providerKey, anthropicKey, pemBody);
    const token = await idp.token(AUD);
    const api = client(svc.hybrid.url, {
      authorization: `Bearer ${token}`,
      // Standalone tokens in arbitrary headers, as proxies and browsers send them.
      cookie: `session=${token}`,
      'x-forwarded-authorization': `Bearer ${providerKey}`,
    });
    const created = await api.post(`/v1/namespaces/${nsA}/secrets`, {
      name: 'provider',
      stringData: { apiKey: providerKey, anthropic: anthropicKey, 'tls.key': pem },
    });
    expect(created.status, created.text).toBe(201);
    const model = await api.post(`/v1/namespaces/${nsA}/models`, {
      name: 'default',
      spec: {
        type: 'openai',
        model: 'gpt-4o-mini',
        baseUrl: 'https://api.example.com/v1',
        apiKey: { secretKeyRef: { name: 'provider', key: 'apiKey' } },
      },
    });
    expect(model.status, model.text).toBe(201);
    // Failures log more: a bad secret for a known key, a bad JWT, a key in the wrong form.
    const badSecret = `sk-svc-${crypto.randomUUID().replaceAll('-', '')}abcdefghijk`;
    secrets.push(badSecret);
    for (const authorization of [
      basic(keyA.public_key, badSecret),
      `Bearer ${token.slice(0, -6)}AAAAAA`,
      `Bearer ${keyA.public_key}:${badSecret}`,
      `Basic ${Buffer.from(`${providerKey}:${pem}`).toString('base64')}`,
    ])
      expect((await client(svc.hybrid.url, { authorization }).get('/v1/api-keys')).status).toBe(401);
    await client(svc.basic.url, { 'x-api-key': `${keyA.public_key}:${badSecret}` }).get('/v1/api-keys');
    expect((await api.get(`/v1/namespaces/${nsA}/secrets/provider`)).text).not.toContain(providerKey);

    secrets.push(...idp.secrets());
    const text = logs.text();
    // The capture saw the traffic (headers included), so absence below means redaction.
    expect(text).toContain('"msg":"request"');
    expect(text).toContain('x-forwarded-authorization');
    expect(text).toContain('[REDACTED]');
    const leaked = secrets.filter((s) => s.length >= 12 && text.includes(s));
    expect(leaked.map((s) => `${s.slice(0, 10)}…`)).toEqual([]);
    for (const s of secrets) expect(text).not.toContain(Buffer.from(s).toString('base64').slice(0, 40));
  });
});
