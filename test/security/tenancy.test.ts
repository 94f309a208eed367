/**
 * Tenant isolation across two API instances (issue 18 item 3), each installed for its own
 * namespace in hybrid mode with its own OIDC audience, as the tenant overlay deploys them: every
 * credential kind of one tenant is refused by the other; with its own valid credentials, a tenant
 * still cannot read or write the other's namespace through any route family — resources, secrets,
 * the generic API, marketplace sources, API keys.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureLogs } from '../auth/support.ts';
import { type OidcFixture, startOidcProvider } from '../fixtures/oidc/provider.ts';
import { basic, client, startService, type TestService } from '../gateway/support.ts';
import { createNamespace } from '../support/kube.ts';

const AUD_A = 'https://berth.test/tenant-a';
const AUD_B = 'https://berth.test/tenant-b';
const logs = captureLogs();
let idp: OidcFixture;
const t = {} as Record<
  'a' | 'b',
  { ns: string; svc: TestService; key: { public_key: string; secret_key: string }; jwt: string }
>;

beforeAll(async () => {
  idp = await startOidcProvider();
  const [nsA, nsB] = await Promise.all([createNamespace('sec-ten-a'), createNamespace('sec-ten-b')]);
  for (const [id, ns, aud] of [
    ['a', nsA, AUD_A],
    ['b', nsB, AUD_B],
  ] as const) {
    const svc = await startService({
      namespace: ns,
      confined: true,
      logger: logs.logger,
      env: { AUTH_MODE: 'hybrid', OIDC_ISSUER_URL: idp.issuer, OIDC_APPLICATION_ID: aud },
    });
    const jwt = await idp.token(aud);
    const made = await client(svc.url, { authorization: `Bearer ${jwt}` }).post('/v1/api-keys', { name: id });
    expect(made.status, made.text).toBe(201);
    t[id] = { ns, svc, key: made.body, jwt };
    // Something of each tenant's own to be after.
    const own = client(svc.url, { authorization: `Bearer ${jwt}` });
    expect(
      (await own.post(`/v1/namespaces/${ns}/secrets`, { name: 'crown', stringData: { v: `jewel-${id}` } }))
        .status,
    ).toBe(201);
    expect(
      (await own.post(`/v1/namespaces/${ns}/agents`, { name: 'mine', spec: { prompt: `p-${id}` } })).status,
    ).toBe(201);
  }
}, 120_000);

afterAll(async () => {
  for (const x of Object.values(t)) await x.svc.close();
  await idp?.close();
});

const credentials = (id: 'a' | 'b') => ({
  basic: { authorization: basic(t[id].key.public_key, t[id].key.secret_key) },
  'x-api-key': { 'x-api-key': `${t[id].key.public_key}:${t[id].key.secret_key}` },
  'bearer key': { authorization: `Bearer ${t[id].key.public_key}:${t[id].key.secret_key}` },
  jwt: { authorization: `Bearer ${t[id].jwt}` },
});

describe("one tenant's credentials at the other tenant's instance", () => {
  it('are refused with 401, whatever their form; each instance accepts its own', async () => {
    for (const [owner, at] of [
      ['a', 'b'],
      ['b', 'a'],
    ] as const) {
      for (const [form, headers] of Object.entries(credentials(owner))) {
        const here = client(t[at].svc.url, headers);
        const res = await here.get(`/v1/namespaces/${t[at].ns}/agents`);
        expect(res.status, `${owner}'s ${form} at ${at}`).toBe(401);
        const own = await client(t[owner].svc.url, headers).get(`/v1/namespaces/${t[owner].ns}/agents`);
        expect(own.status, `${owner}'s ${form} at ${owner}`).toBe(200);
      }
    }
    // A token for neither audience is refused by both.
    const stranger = await idp.token('https://berth.test/nobody');
    for (const id of ['a', 'b'] as const) {
      const res = await client(t[id].svc.url, { authorization: `Bearer ${stranger}` }).get('/v1/api-keys');
      expect(res.status).toBe(401);
      expect(res.body.error.message).toMatch(/aud/);
    }
  });
});

describe("a tenant's own valid credentials", () => {
  it("reach nothing of the other tenant's namespace: reads and writes of every route family are 403", async () => {
    const a = client(t.a.svc.url, credentials('a').jwt);
    const b = t.b.ns;
    const requests: Array<[string, string, unknown?]> = [
      ['GET', `/v1/namespaces/${b}/agents`],
      ['GET', `/v1/namespaces/${b}/agents/mine`],
      ['PUT', `/v1/namespaces/${b}/agents/mine`, { spec: { prompt: 'owned' } }],
      ['PATCH', `/v1/namespaces/${b}/agents/mine`, { spec: { prompt: 'owned' } }],
      ['DELETE', `/v1/namespaces/${b}/agents/mine`],
      ['POST', `/v1/namespaces/${b}/agents`, { name: 'implant', spec: { prompt: 'x' } }],
      ['GET', `/v1/namespaces/${b}/secrets`],
      ['GET', `/v1/namespaces/${b}/secrets/crown`],
      ['DELETE', `/v1/namespaces/${b}/secrets/crown`],
      [
        'POST',
        `/v1/namespaces/${b}/queries`,
        { name: 'q', spec: { input: 'x', target: { type: 'agent', name: 'mine' } } },
      ],
      ['GET', `/v1/resources/api/v1/secrets?namespace=${b}`],
      ['GET', `/v1/resources/api/v1/secrets/crown?namespace=${b}`],
      ['GET', `/v1/resources/apis/berth.dev/v1alpha1/agents?namespace=${b}`],
      // A repeated parameter: the confinement and the read agree on the first value.
      ['GET', `/v1/resources/api/v1/secrets?namespace=${b}&namespace=${t.a.ns}`],
      ['GET', `/v1/namespaces/${b}/marketplace-sources`],
      ['POST', `/v1/namespaces/${b}/marketplace-sources`, { name: 's', url: 'https://example.com/m.json' }],
      ['GET', `/api/v1/namespaces/${b}/marketplace-items`],
    ];
    for (const [method, path, body] of requests) {
      const res = await a.call(method, path, body);
      expect([401, 403], `${method} ${path} → ${res.status} ${res.text.slice(0, 200)}`).toContain(res.status);
      expect(res.text).not.toContain('jewel-b');
    }
    // B's objects are untouched.
    const own = client(t.b.svc.url, credentials('b').jwt);
    expect((await own.get(`/v1/namespaces/${b}/agents/mine`)).body.spec.prompt).toBe('p-b');
    expect((await own.get(`/v1/namespaces/${b}/secrets/crown`)).status).toBe(200);
    expect((await own.get(`/v1/namespaces/${b}/agents/implant`)).status).toBe(404);
  });

  it("neither list nor revoke the other tenant's API keys", async () => {
    const a = client(t.a.svc.url, credentials('a').basic);
    const listed = await a.get('/v1/api-keys');
    expect(listed.status).toBe(200);
    expect(listed.text).not.toContain(t.b.key.public_key);
    expect((await a.del(`/v1/api-keys/${t.b.key.public_key}`)).status).toBe(404);
    // B's key still works at B.
    const b = client(t.b.svc.url, credentials('b').basic);
    expect((await b.get(`/v1/namespaces/${t.b.ns}/agents`)).status).toBe(200);
  });

  it('the generic API of a confined instance defaults to its own namespace', async () => {
    const a = client(t.a.svc.url, credentials('a').basic);
    const res = await a.get('/v1/resources/api/v1/secrets');
    expect(res.status).toBe(200);
    const namespaces = new Set(
      res.body.items.map((s: { metadata: { namespace: string } }) => s.metadata.namespace),
    );
    expect([...namespaces]).toEqual([t.a.ns]);
    expect(res.text).not.toContain('jewel');
  });
});

describe('log redaction', () => {
  it('no key or token of either tenant appears in any log line', () => {
    const text = logs.text();
    const secrets = [t.a.key.secret_key, t.b.key.secret_key, ...idp.secrets()];
    for (const s of secrets) expect(text.includes(s), `leaked ${s.slice(0, 12)}…`).toBe(false);
  });
});
