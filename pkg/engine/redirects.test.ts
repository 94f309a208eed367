/**
 * The engine's redirect rule against real servers: two ports are two origins. Configured headers
 * (and every credential-looking one) never reach the second origin; model calls refuse other
 * origins and https → http; same-origin hops keep everything.
 */
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpClient } from './http.ts';
import { crossOriginHeaders, modelHopProblem, requestFollowing } from './redirects.ts';
import { RedirectRefused, upstreamErrorIn } from './upstream.ts';

interface Seen {
  url: string;
  method: string;
  headers: IncomingHttpHeaders;
  body: string;
}

async function server(handle: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const seen: Seen[] = [];
  const s = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => {
      body += d;
    });
    req.on('end', () => {
      seen.push({ url: req.url ?? '', method: req.method ?? '', headers: req.headers, body });
      handle(req, res);
    });
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  return {
    seen,
    base,
    close: () => {
      s.closeAllConnections();
      return new Promise<void>((r) => s.close(() => r()));
    },
  };
}

let other: Awaited<ReturnType<typeof server>>;
let first: Awaited<ReturnType<typeof server>>;
const client = createHttpClient();

/** `/to/<status>/<location>` redirects there, `/loop/<n>` to `/loop/<n+1>`; anything else answers `{at}`. */
const handler = (at: string) => (req: http.IncomingMessage, res: http.ServerResponse) => {
  const m = /^\/to\/(\d{3})\/(.+)$/.exec(req.url ?? '');
  const loop = /^\/loop\/(\d+)$/.exec(req.url ?? '');
  if (m) res.writeHead(Number(m[1]), { location: decodeURIComponent(m[2] as string) }).end('moved');
  else if (loop) res.writeHead(302, { location: `/loop/${Number(loop[1]) + 1}` }).end();
  else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ at }));
};

beforeAll(async () => {
  other = await server(handler('other'));
  first = await server(handler('first'));
});
afterAll(async () => {
  await client.close();
  await Promise.all([first?.close(), other?.close()]);
});

const to = (status: number, target: string) => `${first.base}/to/${status}/${encodeURIComponent(target)}`;
const SECRET_HEADERS = {
  authorization: 'Bearer s3cret',
  'x-api-key': 'key-from-secret',
  'api-key': 'azure-key',
  cookie: 'a=b',
  accept: 'application/json',
  'user-agent': 'from-a-secret',
};

describe('a hop to another origin (tools, memories, evaluators: strip)', () => {
  it('carries no configured header and nothing credential-like, whatever its name', async () => {
    const before = other.seen.length;
    const res = await client.fetch(to(307, `${other.base}/landing`), {
      method: 'POST',
      headers: { ...SECRET_HEADERS, 'content-type': 'application/json' },
      body: '{"q":1}',
      upstream: { kind: 'tool', configured: ['x-api-key', 'user-agent'] },
    });
    expect(await res.json()).toEqual({ at: 'other' });
    const got = other.seen.slice(before);
    expect(got).toHaveLength(1);
    expect(got[0]?.body).toBe('{"q":1}'); // a 307 keeps method and body
    for (const h of ['authorization', 'x-api-key', 'api-key', 'cookie', 'user-agent'])
      expect(got[0]?.headers[h], h).toBeUndefined();
    expect(got[0]?.headers.accept).toBe('application/json');
    expect(JSON.stringify(got[0]?.headers)).not.toMatch(/s3cret|key-from-secret|azure-key|from-a-secret/);
  });

  it('memory calls (send) follow the same rule', async () => {
    const before = other.seen.length;
    const out = await client.send(to(302, `${other.base}/conversations`), {
      method: 'GET',
      headers: { 'x-memory-token': 'memory-secret' },
      upstream: { kind: 'memory', configured: ['x-memory-token'] },
    });
    expect(out).toEqual({ status: 200, text: '{"at":"other"}' });
    expect(other.seen.slice(before).map((s) => s.headers['x-memory-token'])).toEqual([undefined]);
  });

  it('a same-origin hop keeps every header', async () => {
    const before = first.seen.length;
    await (
      await client.fetch(to(302, '/same'), {
        headers: SECRET_HEADERS,
        upstream: { kind: 'tool', configured: ['x-api-key'] },
      })
    ).text();
    expect(first.seen.slice(before).map((s) => [s.url, s.headers['x-api-key']])).toEqual([
      [`/to/302/${encodeURIComponent('/same')}`, 'key-from-secret'],
      ['/same', 'key-from-secret'],
    ]);
  });

  it('a stripped header stays stripped when a later hop comes back to the first origin', async () => {
    const before = first.seen.length;
    const back = `${other.base}/to/307/${encodeURIComponent(`${first.base}/back`)}`;
    const res = await client.fetch(to(307, back), {
      headers: { 'x-api-key': 'k' },
      upstream: { kind: 'tool', configured: ['x-api-key'] },
    });
    expect(await res.json()).toEqual({ at: 'first' });
    expect(first.seen.slice(before).map((s) => [s.url, s.headers['x-api-key']])).toEqual([
      [`/to/307/${encodeURIComponent(back)}`, 'k'],
      ['/back', undefined],
    ]);
  });

  it('keeps only protocol headers, minus those the resource configured', () => {
    const h = { 'X-Api-Key': 'k', accept: 'a', Authorization: 'b', tracestate: 't', 'Content-Type': 'c' };
    expect(crossOriginHeaders(h)).toEqual({ accept: 'a', tracestate: 't', 'Content-Type': 'c' });
    expect(crossOriginHeaders(h, ['Accept', 'content-type'])).toEqual({ tracestate: 't' });
  });
});

describe('model calls (refuse)', () => {
  // The model rule over plain http: its transport rule (tested below, and over https in
  // test/security/upstreams.test.ts) would refuse these hops first.
  const refusing = (url: string) =>
    requestFollowing(
      client.dispatcher,
      { url: new URL(url), method: 'POST', headers: { authorization: 'Bearer sk-model' }, body: '{}' },
      { crossOrigin: 'refuse' },
    );

  it('refuse a hop to another origin: the second server never hears of the call', async () => {
    const before = other.seen.length;
    const err = await refusing(to(307, `${other.base}/v1/chat/completions`)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RedirectRefused);
    expect((err as Error).message).toMatch(/refused: model calls follow redirects within their origin only/);
    expect(other.seen.length).toBe(before);
  });

  it('follow a same-origin hop', async () => {
    const { res, url } = await refusing(to(308, '/v1/other'));
    expect(await res.body.json()).toEqual({ at: 'first' });
    expect(url.pathname).toBe('/v1/other');
  });

  it('go through the rule in the client: an http hop is refused before any other origin is asked', async () => {
    const before = other.seen.length;
    const err = await client
      .fetchFor({ kind: 'model' })(to(307, `${other.base}/v1/chat/completions`), {
        method: 'POST',
        body: '{}',
      })
      .catch((e: unknown) => e);
    expect(upstreamErrorIn(err)).toBeInstanceOf(RedirectRefused);
    expect(other.seen.length).toBe(before);
  });

  it('the transport rule per hop: never https → http, http only to *.svc.cluster.local', () => {
    const u = (s: string) => new URL(s);
    expect(modelHopProblem(u('https://a.example/v1'), u('http://a.example/v1'))).toMatch(
      /never goes from https to http/,
    );
    expect(modelHopProblem(u('https://a.example/v1'), u('http://m.ns.svc.cluster.local/v1'))).toMatch(
      /never goes from https to http/,
    );
    expect(modelHopProblem(u('http://m.ns.svc.cluster.local/v1'), u('http://127.0.0.1/v1'))).toMatch(
      /\*\.svc\.cluster\.local/,
    );
    expect(modelHopProblem(u('http://m.ns.svc.cluster.local/a'), u('http://m.ns.svc.cluster.local/b'))).toBe(
      undefined,
    );
    expect(modelHopProblem(u('https://a.example/v1'), u('https://b.example/v1'))).toBe(undefined);
  });
});

describe('every call', () => {
  it('refuses Locations that are not http(s), carry credentials, or loop past 20 hops', async () => {
    for (const [target, why] of [
      ['file:///etc/passwd', /file: URL refused/],
      [`http://user:pw@127.0.0.1:${new URL(other.base).port}/`, /carries credentials/],
    ] as const) {
      const err = await client.fetch(to(302, target)).catch((e: unknown) => e);
      expect((err as Error).message, target).toMatch(why);
    }
    const before = first.seen.length;
    const loop = await client.fetch(`${first.base}/loop/0`).catch((e: unknown) => e);
    expect((loop as Error).message).toBe('more than 20 redirects');
    expect(first.seen.length - before).toBe(21);
  });

  it('fetch itself (the fallback for stream bodies) never follows a redirect', async () => {
    const before = other.seen.length;
    const res = await client.fetch(to(307, `${other.base}/x`), {
      method: 'POST',
      body: new Blob(['{}']).stream(),
      headers: { 'x-api-key': 'k' },
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(307);
    expect(other.seen.length).toBe(before);
  });
});
