/**
 * Every secret a run handles is absent from every log line and every exported span (issue 18
 * item 3): API keys, bearer JWTs, a marketplace credential, model API keys (one in a known provider
 * format, one opaque) and the dashboard's AUTH_SECRET. The platform runs as `berth up` wires it (the
 * broker, the controller with the real engine, API services on one cache) with every component
 * logging at trace level into one capture; the engine's spans are exported to the broker's OTLP
 * ingest, and read back from there.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_VERSION, SECRET_USAGE_ENGINE, SECRET_USAGE_LABEL } from '../../pkg/api/index.ts';
import { captureLogs } from '../auth/support.ts';
import { type Platform, startPlatform } from '../compat/platform.ts';
import { AUTH_SECRET, freePort, ssoEnv, startDashboard, type TestDashboard } from '../dashboard/support.ts';
import { type OidcFixture, startOidcProvider } from '../fixtures/oidc/provider.ts';
import { basic, client } from '../gateway/support.ts';
import { eventually } from '../support/wait.ts';

const AUD = 'https://berth.test/secrets';
const logs = captureLogs();
const MODEL_KEY = `sk-proj-${crypto.randomUUID().replaceAll('-', '')}Xy`;
// A key of no known format: only never logging it at all keeps it out.
const OPAQUE_MODEL_KEY = `opaque${crypto.randomUUID().replaceAll('-', '')}`;
const MARKETPLACE_CREDENTIAL = `mp-cred-${crypto.randomUUID()}`;
let p: Platform;
let idp: OidcFixture;
let dashboard: TestDashboard;
let hybridUrl: string;
const used: string[] = [MODEL_KEY, OPAQUE_MODEL_KEY, MARKETPLACE_CREDENTIAL, AUTH_SECRET];

const obj = (kind: string, name: string, spec: Record<string, unknown>) =>
  ({ apiVersion: API_VERSION, kind, metadata: { name, namespace: p.ns }, spec }) as KubernetesObject;

beforeAll(async () => {
  [p, idp] = await Promise.all([startPlatform('sec-secrets', { logger: logs.logger }), startOidcProvider()]);
  const open = client(p.api.url);
  for (const [name, value] of [
    ['provider-key', MODEL_KEY],
    ['opaque-key', OPAQUE_MODEL_KEY],
  ])
    expect(
      (
        await open.post(`/v1/namespaces/${p.ns}/secrets`, {
          name,
          metadata: { labels: { [SECRET_USAGE_LABEL]: SECRET_USAGE_ENGINE } },
          stringData: { token: value },
        })
      ).status,
    ).toBe(201);
  const keyed = (name: string, secret: string) =>
    obj('Model', name, {
      type: 'openai',
      model: name,
      baseUrl: p.fake.url,
      apiKey: { secretKeyRef: { name: secret, key: 'token' } },
    });
  await p.apply(keyed('keyed', 'provider-key'));
  await p.apply(keyed('keyed-opaque', 'opaque-key'));
  await p.apply(obj('Agent', 'keyed', { prompt: 'You are keyed.', modelRef: { name: 'keyed' } }));
  await p.apply(obj('Agent', 'refused', { prompt: 'You are refused.', modelRef: { name: 'keyed-opaque' } }));
  // The provider refuses the opaque key: the failure path (errors, logs, span exceptions) runs too.
  p.fake.script('keyed-opaque', { fail: { status: 401, times: 1_000 } });
  const hybrid = await p.startApi({
    env: { AUTH_MODE: 'hybrid', OIDC_ISSUER_URL: idp.issuer, OIDC_APPLICATION_ID: AUD },
  });
  hybridUrl = hybrid.url;
  // The dashboard signs its session and sign-in cookies with AUTH_SECRET (hybrid mode).
  const port = await freePort();
  dashboard = await startDashboard(ssoEnv(idp, `http://127.0.0.1:${port}`, '', hybrid.url, 'hybrid'), port);
}, 120_000);

afterAll(async () => {
  await dashboard?.close();
  await p?.stop();
  await idp?.close();
});

describe('a run that uses every kind of secret', () => {
  it('authenticates with an API key and a JWT, calls models with their keys, and stores a marketplace credential', async () => {
    const jwt = await idp.token(AUD);
    used.push(jwt);
    const made = await client(hybridUrl, { authorization: `Bearer ${jwt}` }).post('/v1/api-keys', {
      name: 'run',
    });
    expect(made.status, made.text).toBe(201);
    used.push(made.body.secret_key);

    // A completion with the API key (the SDK's bearer form), streaming with the JWT.
    const sdk = new OpenAI({
      baseURL: `${hybridUrl}/compat/v1`,
      apiKey: `${made.body.public_key}:${made.body.secret_key}`,
      maxRetries: 0,
    });
    const done = await sdk.chat.completions.create({
      model: 'agent/keyed',
      messages: [{ role: 'user', content: 'hello' }],
    });
    expect(done.choices[0]?.message.content).toContain('hello');
    const jwtSdk = new OpenAI({ baseURL: `${hybridUrl}/compat/v1`, apiKey: jwt, maxRetries: 0 });
    await expect(
      jwtSdk.chat.completions.create({ model: 'agent/refused', messages: [{ role: 'user', content: 'hi' }] }),
    ).rejects.toThrow();
    const basicAuth = client(hybridUrl, { authorization: basic(made.body.public_key, made.body.secret_key) });
    expect((await basicAuth.get(`/v1/namespaces/${p.ns}/models/keyed`)).status).toBe(200);

    // The model keys really went to the provider.
    const sent = p.fake.requests.map((r) => r.authorization);
    expect(sent).toContain(`Bearer ${MODEL_KEY}`);
    expect(sent).toContain(`Bearer ${OPAQUE_MODEL_KEY}`);

    // A marketplace credential: test-fetched (the host does not exist), refused, never stored.
    const mp = await client(p.api.url).post(`/v1/namespaces/${p.ns}/marketplace-sources`, {
      name: 'private',
      url: 'https://catalogue.invalid/m.json',
      auth: { scheme: 'bearer', credential: MARKETPLACE_CREDENTIAL },
    });
    expect([400, 422]).toContain(mp.status);
    expect(mp.text).not.toContain(MARKETPLACE_CREDENTIAL);

    // The dashboard starts a sign-in: a state cookie sealed with AUTH_SECRET.
    let next = `${dashboard.url}/`;
    const cookies: string[] = [];
    for (let hop = 0; hop < 3 && next.startsWith(dashboard.origin); hop++) {
      const res = await fetch(next, { redirect: 'manual' });
      expect(res.status).toBeLessThan(500);
      cookies.push(...res.headers.getSetCookie());
      next = new URL(res.headers.get('location') ?? '', next).toString();
    }
    expect(cookies.length, 'the sign-in set a sealed cookie').toBeGreaterThan(0);
  });

  it('leaves no secret in any exported span', async () => {
    let spans = '';
    await eventually(
      async () => {
        spans = await (await fetch(`${p.broker.url}/traces?limit=1000`)).text();
        return spans.includes('keyed-opaque') && spans.includes('exception');
      },
      15_000,
      100,
    );
    for (const s of used) expect(spans.includes(s), `a span carries ${s.slice(0, 10)}…`).toBe(false);
    for (const jwt of used.filter((s) => s.startsWith('eyJ')))
      expect(spans.includes(jwt.split('.')[2] as string), 'a span carries a JWT signature').toBe(false);
  });

  it('leaves no secret in any log line', () => {
    const text = logs.text() + dashboard.logs();
    // The capture saw the traffic (trace level: request headers, redacted).
    expect(text).toMatch(/"authorization":"\[REDACTED\]"/);
    expect(text).toContain('keyed-opaque');
    for (const s of [...used, ...idp.secrets()])
      expect(text.includes(s), `a log line carries ${s.slice(0, 10)}…`).toBe(false);
  });
});
