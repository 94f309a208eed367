/**
 * The `/api/*` proxy in `open` and `basic` modes, over HTTP: the mapping to the API's paths, what
 * is forwarded and what never is, Server-Sent Events passing unbuffered, and an unreachable API
 * answered 502 with a message naming API_SERVICE_URL.
 */
import { request, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, json, type StubApi, startDashboard, startStubApi, type TestDashboard } from './support.ts';

let api: StubApi;
let open: TestDashboard;
let basic: TestDashboard;
let prefixed: TestDashboard;
/** The open stream of /v1/stream, for the test to write frames into when it chooses. */
let stream: ServerResponse | undefined;

beforeAll(async () => {
  api = await startStubApi();
  api.on('/v1/echo', (r, res) =>
    json(res, 201, { method: r.method, url: r.url, body: r.body }, { 'set-cookie': 'api=1' }),
  );
  api.on('/v1/challenge', (_r, res) =>
    json(res, 401, { error: { code: 'unauthorized' } }, { 'www-authenticate': 'Basic realm="berth"' }),
  );
  api.on('/v1/stream', (_r, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write(': connected\n\n');
    stream = res;
  });
  open = await startDashboard({ AUTH_MODE: 'open', API_SERVICE_URL: api.url });
  basic = await startDashboard({ AUTH_MODE: 'basic', API_SERVICE_URL: api.url });
  prefixed = await startDashboard({ AUTH_MODE: 'open', API_SERVICE_URL: api.url, BASE_PATH: '/team-a' });
});

afterAll(async () => {
  await Promise.all([open?.close(), basic?.close(), prefixed?.close()]);
  await api?.close();
});

const lastSeen = () => api.seen.at(-1);
const BASIC = `Basic ${Buffer.from('pk-svc-abc:sk-svc-def').toString('base64')}`;

describe('open mode', () => {
  it('maps /api/<rest> to the API /<rest> with the method, query string and body, adding no credentials', async () => {
    const res = await fetch(`${open.url}/api/v1/echo?a=1&b=two%20words`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: 'Bearer from-browser',
        cookie: 'x=secret',
      },
      body: JSON.stringify({ hello: 'world' }),
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({
      method: 'POST',
      url: '/v1/echo?a=1&b=two%20words',
      body: '{"hello":"world"}',
    });
    // What the API set for itself stays there: no cookie on the dashboard's origin.
    expect(res.headers.get('set-cookie')).toBeNull();
    expect(res.headers.get('x-request-id')).toBeTruthy();
    const h = lastSeen()?.headers ?? {};
    expect(h.authorization).toBeUndefined();
    expect(h.cookie).toBeUndefined();
    expect(h['x-request-id']).toBe(res.headers.get('x-request-id'));
    expect(h).toMatchObject({
      'content-type': 'application/json',
      'x-forwarded-prefix': '/api',
      'x-forwarded-host': new URL(open.url).host,
      'x-forwarded-proto': 'http',
      'x-forwarded-for': '127.0.0.1',
    });
  });

  it('keeps the protocol an ingress reports, and appends to its X-Forwarded-For', async () => {
    // fetch cannot set Host; node:http can, as an ingress does.
    await new Promise<void>((resolve, reject) => {
      const headers = {
        host: 'berth.example.com',
        'x-forwarded-proto': 'https',
        'x-forwarded-for': '203.0.113.7',
      };
      request(`${open.url}/api/v1/echo`, { headers }, (res) => res.resume().on('end', resolve))
        .on('error', reject)
        .end();
    });
    expect(lastSeen()?.headers).toMatchObject({
      'x-forwarded-host': 'berth.example.com',
      'x-forwarded-proto': 'https',
      'x-forwarded-for': '203.0.113.7, 127.0.0.1',
    });
  });

  it('passes an API error through unchanged', async () => {
    const res = await fetch(`${open.url}/api/v1/nowhere`);
    expect(res.status).toBe(404);
    expect((await res.json()).error.message).toBe('no route for GET /v1/nowhere');
  });

  it('streams Server-Sent Events through unbuffered', async () => {
    const res = await fetch(`${open.url}/api/v1/stream?watch=true`);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(res.headers.get('x-accel-buffering')).toBe('no');
    const reader = (res.body as ReadableStream<Uint8Array>).pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    const readUntil = async (marker: string) => {
      while (!text.includes(marker)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before ${marker}`);
        text += value;
      }
    };
    await readUntil(': connected');
    // Each frame arrives while the API still holds the stream open: nothing waits for the end.
    for (const n of [1, 2, 3]) {
      stream?.write(`id: ${n}\ndata: {"n":${n}}\n\n`);
      await readUntil(`data: {"n":${n}}`);
    }
    stream?.end();
    await reader.cancel();
  });

  it('answers 502 naming API_SERVICE_URL when the API cannot be reached', async () => {
    for (const unreachable of [`http://127.0.0.1:${await freePort()}`, 'http://berth-api.invalid:8000']) {
      const dash = await startDashboard({ AUTH_MODE: 'open', API_SERVICE_URL: unreachable });
      const res = await fetch(`${dash.url}/api/v1/namespaces`);
      expect(res.status).toBe(502);
      const body = await res.json();
      expect(body.error.code).toBe('api_unreachable');
      expect(body.error.message).toContain(
        `${new URL(unreachable).origin} (API_SERVICE_URL) is not reachable`,
      );
      await dash.close();
    }
  });

  it('serves the screens with no sign-in, and has no auth routes', async () => {
    expect((await fetch(`${open.url}/queries`)).status).toBe(200);
    const res = await fetch(`${open.url}/api/auth/signin`, { redirect: 'manual' });
    expect(res.status).toBe(404);
    expect((await res.json()).error.message).toBe('dashboard sign-in is disabled in AUTH_MODE=open');
  });
});

describe('basic mode', () => {
  it('asks for HTTP Basic on every request and forwards nothing without it', async () => {
    const before = api.seen.length;
    for (const path of ['/', '/queries', '/api/v1/echo']) {
      const res = await fetch(`${basic.url}${path}`);
      expect(res.status, path).toBe(401);
      expect(res.headers.get('www-authenticate'), path).toBe('Basic realm="berth", charset="UTF-8"');
    }
    expect(api.seen.length).toBe(before);
    // A browser navigating gets a page, with the challenge that makes it ask for credentials.
    const page = await fetch(`${basic.url}/chat`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(401);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.headers.get('www-authenticate')).toBe('Basic realm="berth", charset="UTF-8"');
  });

  it('forwards the Basic credentials as they are, and the API challenge back to the browser', async () => {
    const page = await fetch(`${basic.url}/agents`, { headers: { authorization: BASIC } });
    expect(page.status).toBe(200);
    await fetch(`${basic.url}/api/v1/echo`, { headers: { authorization: BASIC } });
    expect(lastSeen()?.headers.authorization).toBe(BASIC);
    const refused = await fetch(`${basic.url}/api/v1/challenge`, { headers: { authorization: BASIC } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe('Basic realm="berth"');
  });
});

describe('a base path', () => {
  it('serves every route under it, with the forwarded prefix carrying it', async () => {
    const bare = await fetch(`${prefixed.origin}/team-a`, { redirect: 'manual' });
    expect([bare.status, bare.headers.get('location')]).toEqual([308, '/team-a/']);
    const home = await (await fetch(`${prefixed.url}/`)).text();
    const urls = [...home.matchAll(/(?:href|src)="([^"]+)"/g)].map((m) => m[1]);
    expect(urls.length).toBeGreaterThan(5);
    for (const u of urls) expect(u).toMatch(/^\/team-a\//);
    expect((await fetch(`${prefixed.url}/static/app/manifest.json`)).status).toBe(200);
    expect((await fetch(`${prefixed.origin}/queries`)).status).toBe(404); // nothing outside the prefix
    const res = await fetch(`${prefixed.url}/api/v1/echo?x=1`);
    expect((await res.json()).url).toBe('/v1/echo?x=1');
    expect(lastSeen()?.headers['x-forwarded-prefix']).toBe('/team-a/api');
  });
});
