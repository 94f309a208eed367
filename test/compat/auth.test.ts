/**
 * /compat/v1 in every AUTH_MODE with the official SDK: open needs no key; basic and hybrid take the
 * API key in bearer form (`apiKey: "pk-svc-…:sk-svc-…"`), hybrid also an OIDC JWT; a missing or
 * wrong credential is the SDK's AuthenticationError. API services of each mode share one platform.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OidcFixture, startOidcProvider } from '../fixtures/oidc/provider.ts';
import { type Platform, startPlatform } from './platform.ts';

const AUD = 'https://compat.berth.test';
let p: Platform;
let idp: OidcFixture;
let basic: string;
let hybrid: string;
let key: string;

beforeAll(async () => {
  [p, idp] = await Promise.all([startPlatform('compat-auth'), startOidcProvider()]);
  basic = (await p.startApi({ env: { AUTH_MODE: 'basic' } })).url;
  hybrid = (
    await p.startApi({
      env: { AUTH_MODE: 'hybrid', OIDC_ISSUER_URL: idp.issuer, OIDC_APPLICATION_ID: AUD },
    })
  ).url;
  // Keys are Secrets of the namespace: one made through the open instance works for all of them.
  const res = await fetch(`${p.api.url}/v1/api-keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'sdk' }),
  });
  expect(res.status).toBe(201);
  const k = await res.json();
  key = `${k.public_key}:${k.secret_key}`;
});

afterAll(async () => {
  await p?.stop();
  await idp?.close();
});

const sdk = (base: string, apiKey: string) =>
  new OpenAI({ baseURL: `${base}/compat/v1`, apiKey, maxRetries: 0 });

/** A streaming and a non-streaming completion and the model list, all through the SDK. */
async function exercise(client: OpenAI) {
  const models = await client.models.list();
  expect(models.data.map((m) => m.id)).toContain('agent/helper');
  const res = await client.chat.completions.create({
    model: 'agent/helper',
    messages: [{ role: 'user', content: 'hello' }],
  });
  expect(res.choices[0]?.message.content).toBe('echo: hello');
  const stream = await client.chat.completions.create({
    model: 'model/default',
    messages: [{ role: 'user', content: 'streamed' }],
    stream: true,
  });
  let text = '';
  for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
  expect(text).toBe('echo: streamed');
}

describe('AUTH_MODE', () => {
  it('open: no credential at all is needed', async () => {
    const res = await fetch(`${p.api.url}/compat/v1/models`);
    expect(res.status).toBe(200);
    await exercise(sdk(p.api.url, 'anything'));
  });

  it('basic: the SDK works with the API key in bearer form', async () => {
    await exercise(sdk(basic, key));
  });

  it('basic: no key or a wrong one is a 401 AuthenticationError', async () => {
    const bare = await fetch(`${basic}/compat/v1/chat/completions`, { method: 'POST', body: '{}' });
    expect(bare.status).toBe(401);
    expect(bare.headers.get('www-authenticate')).toMatch(/^Basic realm="berth"/);
    const [pk] = key.split(':');
    for (const wrong of [`${pk}:sk-svc-0000000000000000000000000000000000000000`, 'not-a-key']) {
      const err = await sdk(basic, wrong)
        .models.list()
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(err, wrong).toBeInstanceOf(OpenAI.AuthenticationError);
    }
    const streamed = await sdk(basic, 'not-a-key')
      .chat.completions.create({
        model: 'agent/helper',
        messages: [{ role: 'user', content: 'x' }],
        stream: true,
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(streamed).toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('hybrid: the API key in bearer form and an OIDC access token both work', async () => {
    await exercise(sdk(hybrid, key));
    await exercise(sdk(hybrid, await idp.token(AUD)));
  });

  it('hybrid: a token for another audience or no credential is a 401', async () => {
    const other = await idp.token('https://other.berth.test');
    await expect(sdk(hybrid, other).models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    const bare = await fetch(`${hybrid}/compat/v1/models`);
    expect(bare.status).toBe(401);
  });
});
