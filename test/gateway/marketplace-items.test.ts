/**
 * The items aggregator and the request-forgery guard on the real control plane (issue 13): every
 * per-source error code, the timeouts, the cache and who may use it, every refused address — and
 * the credentials absent from every log line and response of the file.
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../pkg/kube/client/index.ts';
import { CoreKinds, type KindRef, Scheme } from '../../pkg/kube/kinds.ts';
import { kubeConfig } from '../support/kube.ts';
import { startWorld, userTokens, type World } from './marketplace-support.ts';
import { client } from './support.ts';

let w: World;
let editor: ReturnType<World['as']>;
let reader: ReturnType<World['as']>;
let sources: string;
let items: string;
const responses: string[] = [];
const admin = createClient({ kc: kubeConfig(), scheme: new Scheme() });
const CM = CoreKinds.ConfigMap as KindRef<V1ConfigMap>;

beforeAll(async () => {
  w = await startWorld('mp-items');
  const t = await userTokens(w);
  // Every answer of the file is kept for the leak check at the end.
  const keep = (c: ReturnType<World['as']>): ReturnType<World['as']> => ({
    ...c,
    call: async (...args: Parameters<typeof c.call>) => {
      const r = await c.call(...args);
      responses.push(r.text);
      return r;
    },
    get: async (p, extra) => {
      const r = await c.get(p, extra);
      responses.push(r.text);
      return r;
    },
    post: async (p, b, extra) => {
      const r = await c.post(p, b, extra);
      responses.push(r.text);
      return r;
    },
    patch: async (p, b) => {
      const r = await c.patch(p, b);
      responses.push(r.text);
      return r;
    },
  });
  editor = keep(w.as(t.editor));
  reader = keep(w.as(t.reader));
  sources = `/api/v1/namespaces/${w.ns}/marketplace-sources`;
  items = `/api/v1/namespaces/${w.ns}/marketplace-items`;
}, 120_000);
afterAll(() => w?.close());

/** Puts sources straight into the map (as a seed would): no write-time check stands in the way. */
async function seed(data: Record<string, object>) {
  await admin.apply(
    CM,
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'marketplace-sources', namespace: w.ns },
      data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, JSON.stringify(v)])),
    },
    { fieldManager: 'test-seed', force: true },
  );
}

type SourceResult = { name: string; itemCount: number; error?: { code: string; message: string } };
const byName = (body: { sources: SourceResult[] }) =>
  Object.fromEntries(body.sources.map((s) => [s.name, s])) as Record<string, SourceResult>;

describe('GET marketplace-items', () => {
  it('aggregates every source concurrently and reports each failure inline, always 200', async () => {
    const u = w.server.url;
    await seed({
      public: { url: `${u}/public.json`, displayName: 'Public' },
      'barrier-1': { url: `${u}/barrier.json?one` },
      'barrier-2': { url: `${u}/barrier.json?two` },
      slow: { url: `${u}/slow.json` },
      http500: { url: `${u}/500.json` },
      'bad-json': { url: `${u}/bad-json.json` },
      'no-type': { url: `${u}/no-type.json` },
      'no-name': { url: `${u}/no-name.json` },
      'not-manifest': { url: `${u}/not-manifest.json` },
      refused: { url: `https://127.0.0.1:${w.closedPort}/m.json` },
      unauthorized: { url: `${u}/private.json` },
      forbidden: { url: `${u}/forbidden.json` },
      redirected: { url: `${u}/redirect.json` },
      broken: { displayName: 'no url' },
    });
    const res = await editor.get(items);
    expect(res.status, res.text).toBe(200);
    const s = byName(res.body);
    expect(s.public).toMatchObject({ displayName: 'Public', url: `${u}/public.json`, itemCount: 2 });
    expect(s.public?.error).toBeUndefined();
    // Both barrier sources answered: they were in flight at the same time.
    expect(s['barrier-1']?.error).toBeUndefined();
    expect(s['barrier-2']?.itemCount).toBe(1);
    const codes = Object.fromEntries(Object.values(s).map((x) => [x.name, x.error?.code]));
    expect(codes).toMatchObject({
      slow: 'fetch_timeout',
      http500: 'http_error',
      'bad-json': 'parse_error',
      'no-type': 'parse_error',
      'no-name': 'parse_error',
      'not-manifest': 'parse_error',
      refused: 'network_error',
      unauthorized: 'auth_error',
      forbidden: 'auth_error',
      broken: 'parse_error',
    });
    expect(s.refused?.error?.message).toContain('connection refused');
    expect(s['bad-json']?.error?.message).toBe('the manifest is not valid JSON');
    expect(s['no-type']?.error?.message).toContain('items.1.type');
    // A public source may redirect (each hop through the guard); its items are the target's.
    expect(s.redirected).toMatchObject({ itemCount: 2 });
    const names = res.body.items.map((i: { name: string; source: string }) => `${i.source}/${i.name}`);
    expect(names).toEqual(
      expect.arrayContaining(['public/public-a', 'public/public-b', 'redirected/other-a']),
    );
    const item = res.body.items.find((i: { name: string }) => i.name === 'public-b');
    expect(item).toEqual({
      name: 'public-b',
      type: 'tool',
      version: '1.2.0',
      extra: { kept: true },
      source: 'public',
    });
  });

  it('reports sources still running at the total deadline as aggregator_timeout', async () => {
    // The open-mode instance allows 1.5 s in all and 20 s per source.
    const res = await client(w.open.url).get(items);
    expect(res.status).toBe(200);
    const s = byName(res.body);
    expect(s.slow?.error?.code).toBe('aggregator_timeout');
    expect(s.public?.error).toBeUndefined();
    expect(s.public?.itemCount).toBe(2);
  });
});

describe('private sources and the cache', () => {
  it('serves cached items only to users who may read the credential, and refetches on rotation', async () => {
    await seed({
      slow: { url: `${w.server.url}/public.json` },
      unauthorized: { url: `${w.server.url}/public.json` },
    });
    const made = await editor.post(sources, {
      name: 'vault',
      url: `${w.server.url}/private.json`,
      auth: { scheme: 'bearer', credential: w.server.tokens.bearer },
    });
    expect(made.status, made.text).toBe(201);
    const fetches = () => w.server.count('/private.json');
    const start = fetches();
    expect(byName((await editor.get(items)).body).vault).toMatchObject({ itemCount: 2 });
    expect(fetches()).toBe(start + 1);
    expect(byName((await editor.get(items)).body).vault).toMatchObject({ itemCount: 2 });
    expect(fetches()).toBe(start + 1); // from the cache

    // The reader may not read the Secret: an auth_error, never the cached items.
    const asReader = await reader.get(items);
    expect(asReader.status).toBe(200);
    expect(byName(asReader.body).vault?.error?.code).toBe('auth_error');
    expect(asReader.body.items.some((i: { source: string }) => i.source === 'vault')).toBe(false);
    expect(fetches()).toBe(start + 1);

    // A rotated credential takes effect at once: a new Secret version is a new cache key.
    const rotated = `mp-rotated-${crypto.randomUUID()}`;
    w.credentials.push(rotated);
    w.server.tokens.bearer = rotated;
    expect(
      (await editor.patch(`${sources}/vault`, { auth: { scheme: 'bearer', credential: rotated } })).status,
    ).toBe(200);
    const after = fetches();
    expect(byName((await editor.get(items)).body).vault).toMatchObject({ itemCount: 2 });
    expect(fetches()).toBe(after + 1);
    // An edit of the URL is a new key as well.
    w.server.publish('/private-v2.json', [{ name: 'v2', type: 'agent' }]);
    const moved = await editor.patch(`${sources}/vault`, {
      url: `${w.server.url}/other.json`,
      auth: { scheme: 'bearer', credential: rotated },
    });
    expect(moved.status, moved.text).toBe(200);
    expect(byName((await editor.get(items)).body).vault).toMatchObject({ itemCount: 2 });
    expect(w.server.count('/other.json')).toBeGreaterThan(0);
  });

  it('never sends a credential to a URL it was not given for, even when the map is edited by hand', async () => {
    const cm = await admin.get(CM, { namespace: w.ns, name: 'marketplace-sources' });
    const vault = JSON.parse(cm.data?.vault ?? '{}');
    await seed({ vault: { ...vault, url: `${w.server.url}/public.json?moved` } });
    const s = byName((await editor.get(items)).body);
    expect(s.vault?.error?.code).toBe('auth_error');
    expect(s.vault?.error?.message).toContain('given for another URL');
    expect(w.server.seen.filter((r) => r.path === '/public.json' && r.authorization)).toEqual([]);
  });

  it('never follows a redirect with a credential, so it never reaches another host', async () => {
    const before = w.server.seen.length;
    const res = await editor.post(sources, {
      name: 'hop',
      url: `${w.server.url}/private-redirect.json`,
      auth: { scheme: 'bearer', credential: w.server.tokens.bearer },
    });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('source_unreachable');
    expect(res.body.error.details.sourceError.code).toBe('http_error');
    expect(w.server.seen.slice(before).map((s) => s.path)).toEqual(['/private-redirect.json']);
  });
});

describe('the request-forgery guard', () => {
  it('refuses loopback, private, link-local, metadata, CGNAT and unspecified addresses on write', async () => {
    for (const url of [
      'https://127.0.0.1/m.json',
      `https://127.0.0.2:${w.server.port}/m.json`,
      'https://169.254.169.254/latest/meta-data/',
      'https://10.0.0.1/m.json',
      'https://[::1]/m.json',
      'https://[::ffff:127.0.0.1]/m.json',
      'https://[fd00:ec2::254]/m.json',
      'https://100.100.100.200/m.json',
      'https://0.0.0.0/m.json',
      'https://2130706433/m.json',
      'https://[fe80::1]/m.json',
      'https://224.0.0.1/m.json',
    ]) {
      const res = await editor.post(sources, { name: 'ssrf', url });
      expect(res.status, `${url}: ${res.text}`).toBe(422);
      expect(res.body.error.code).toBe('address_not_allowed');
      expect(res.body.error.message).toContain('is not allowed');
    }
  });

  it('refuses what only the fetch reveals (DNS, redirects) as network_error', async () => {
    const port = w.server.port;
    const enc = encodeURIComponent;
    await seed({
      localhost: { url: `https://localhost:${port}/public.json` },
      'dns-loopback': { url: `https://loopback.test:${port}/public.json` },
      'dns-metadata': { url: 'https://metadata.test/latest/meta-data/' },
      'dns-mapped': { url: `https://mapped.test:${port}/public.json` },
      'dns-rebind': { url: `https://rebind.test:${port}/public.json` },
      'redirect-loopback': { url: `${w.server.url}/redirect-to/${enc(`https://127.0.0.2:${port}/x`)}` },
      'redirect-localhost': {
        url: `${w.server.url}/redirect-to/${enc(`https://localhost:${port}/public.json`)}`,
      },
      'redirect-metadata': { url: `${w.server.url}/redirect-to/${enc('https://169.254.169.254/latest/')}` },
      'redirect-http': { url: `${w.server.url}/redirect-to/${enc(`http://127.0.0.1:${port}/public.json`)}` },
      literal: { url: 'https://10.0.0.1/m.json' },
    });
    const s = byName((await editor.get(items)).body);
    for (const name of [
      'localhost',
      'dns-loopback',
      'dns-metadata',
      'dns-mapped',
      'dns-rebind',
      'redirect-loopback',
      'redirect-localhost',
      'redirect-metadata',
      'literal',
    ]) {
      expect(s[name]?.error?.code, name).toBe('network_error');
      expect(s[name]?.error?.message, name).toContain('is not allowed');
    }
    expect(s['redirect-http']?.error?.code).toBe('network_error');
    // Nothing reached the server under a refused name (the only one it serves is 127.0.0.1).
    const res = await editor.post(sources, {
      name: 'dns-private',
      url: `https://loopback.test:${port}/private.json`,
      auth: { scheme: 'bearer', credential: w.server.tokens.bearer },
    });
    expect(res.status).toBe(422);
    expect(res.body.error.message).toContain('is not allowed');
  });
});

describe('the credential', () => {
  it('appears in no log line and no response of this file', async () => {
    const text = w.logs.text();
    expect(text).toContain('marketplace source created'); // the capture saw the writes
    expect(text).toContain('"msg":"request"');
    for (const secret of w.credentials) {
      const forms = [
        secret,
        Buffer.from(secret).toString('base64'),
        Buffer.from(`:${secret}`).toString('base64'),
      ];
      for (const form of forms) {
        expect(text).not.toContain(form);
        for (const r of responses) expect(r).not.toContain(form);
      }
    }
  });
});
