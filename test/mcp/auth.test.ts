/**
 * `/mcp` under the API's auth modes and namespace confinement: `basic` takes an API key (in bearer
 * form, as MCP clients send one), `hybrid` also an OIDC access token; none or a wrong one is 401
 * for both SDKs. A 2025-11-25 session belongs to the credential that opened it. Another
 * namespace's key is unknown here, and another namespace's `/mcp` neither lists nor invokes this
 * one's targets.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Platform, startPlatform } from '../compat/platform.ts';
import { type OidcFixture, startOidcProvider } from '../fixtures/oidc/provider.ts';
import { startService, type TestService } from '../gateway/support.ts';
import { createNamespace } from '../support/kube.ts';
import { connect, LEGACY, type Revision, textOf } from './clients.ts';

const AUD = 'https://mcp.berth.test';
let p: Platform;
let idp: OidcFixture;
let basic: string;
let hybrid: string;
let keyA: string;
let keyA2: string;
let other: { open: TestService; basic: TestService; key: string; ns: string };

async function newKey(base: string, name: string): Promise<string> {
  const res = await fetch(`${base}/v1/api-keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  expect(res.status).toBe(201);
  const k = await res.json();
  return `${k.public_key}:${k.secret_key}`;
}

// Generous bounds: the machine these run on is shared with other suites (waits are for conditions).
vi.setConfig({ testTimeout: 120_000 });

beforeAll(async () => {
  [p, idp] = await Promise.all([startPlatform('mcp-auth'), startOidcProvider()]);
  basic = (await p.startApi({ env: { AUTH_MODE: 'basic' } })).url;
  hybrid = (
    await p.startApi({ env: { AUTH_MODE: 'hybrid', OIDC_ISSUER_URL: idp.issuer, OIDC_APPLICATION_ID: AUD } })
  ).url;
  // Keys are Secrets of the namespace, made through its open instance.
  [keyA, keyA2] = [await newKey(p.api.url, 'mcp-a'), await newKey(p.api.url, 'mcp-a2')];
  // Another tenant: its own namespace, API instances and key.
  const ns = await createNamespace('mcp-other');
  const open = await startService({ namespace: ns, brokerUrl: p.broker.url });
  const basicOther = await startService({
    namespace: ns,
    cache: open.cache,
    brokerUrl: p.broker.url,
    env: { AUTH_MODE: 'basic' },
  });
  other = { open, basic: basicOther, key: await newKey(open.url, 'other'), ns };
});
afterAll(async () => {
  await other?.basic.close();
  await other?.open.close();
  await p?.stop();
  await idp?.close();
});

const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });
const BOTH: Revision[] = ['modern', 'legacy-v1'];

/** The status of a raw MCP request (a 2025 initialize) with these headers. */
async function initializeStatus(base: string, headers: Record<string, string>) {
  const res = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 'a', version: '1' } },
    }),
  });
  await res.text();
  return {
    status: res.status,
    challenge: res.headers.get('www-authenticate'),
    id: res.headers.get('mcp-session-id'),
  };
}

describe.each(BOTH)('AUTH_MODE with a %s client', (revision) => {
  it('basic: the API key in bearer form works; none or a wrong one is refused', async () => {
    const client = await connect(basic, revision, bearer(keyA));
    const res = await client.callTool({
      name: 'invoke_target',
      arguments: { target: 'agent/helper', input: 'hi' },
    });
    expect(textOf(res)).toBe('echo: hi');
    await client.close();
    const [pk] = keyA.split(':');
    for (const headers of [
      {},
      bearer(`${pk}:sk-svc-0000000000000000000000000000000000000000`),
      bearer('nope'),
    ]) {
      await expect(connect(basic, revision, headers)).rejects.toThrow();
      expect((await initializeStatus(basic, headers)).status).toBe(401);
    }
  });

  it('hybrid: an OIDC access token works; one for another audience is refused', async () => {
    const client = await connect(hybrid, revision, bearer(await idp.token(AUD)));
    expect(
      (await client.callTool({ name: 'list_targets', arguments: {} })).structuredContent?.targets,
    ).toContain('agent/helper');
    await client.close();
    const foreign = bearer(await idp.token('https://other.berth.test'));
    await expect(connect(hybrid, revision, foreign)).rejects.toThrow();
    expect((await initializeStatus(hybrid, foreign)).status).toBe(401);
  });

  it('another namespace’s key is unknown here; its own /mcp shows only its namespace', async () => {
    await expect(connect(basic, revision, bearer(other.key))).rejects.toThrow();
    expect((await initializeStatus(basic, bearer(other.key))).status).toBe(401);
    const client = await connect(other.basic.url, revision, bearer(other.key));
    try {
      const list = await client.callTool({ name: 'list_targets', arguments: {} });
      expect(list.structuredContent?.targets).toEqual([]);
      const res = await client.callTool({
        name: 'invoke_target',
        arguments: { target: 'agent/helper', input: 'x' },
      });
      expect(res.isError).toBe(true);
      expect(textOf(res)).toContain(`does not exist in namespace ${other.ns}`);
    } finally {
      await client.close();
    }
  });
});

describe('/mcp refusals under auth', () => {
  it('401 with the challenges of the mode', async () => {
    expect(await initializeStatus(basic, {})).toMatchObject({
      status: 401,
      challenge: expect.stringMatching(/^Basic/),
    });
    const h = await initializeStatus(hybrid, bearer('not.a.jwt'));
    expect(h.status).toBe(401);
    expect(h.challenge).toMatch(/Bearer realm="berth"/);
    expect((await initializeStatus(basic, { 'impersonate-user': 'admin', ...bearer(keyA) })).status).toBe(
      403,
    );
  });

  it('a session answers only the credential that opened it', async () => {
    const opened = await initializeStatus(basic, bearer(keyA));
    expect(opened.status).toBe(200);
    const list = (credential: string) =>
      fetch(`${basic}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': opened.id as string,
          'mcp-protocol-version': LEGACY,
          ...bearer(credential),
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
      });
    const theirs = await list(keyA2);
    expect(theirs.status).toBe(404);
    expect((await theirs.json()).error.code).toBe('mcp_session_not_found');
    const token = await list(await idp.token(AUD));
    expect(token.status).toBe(401); // a token is not accepted in basic mode at all
    await token.text();
    const mine = await list(keyA);
    expect(mine.status).toBe(200);
    expect(await mine.text()).toContain('invoke_target');
  });
});
