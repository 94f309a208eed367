/**
 * Issue 26 item 4, as a hostile client against the real API service (in-process, real HTTP, every
 * line it logs captured at trace level — the access log with headers included): redaction is linear
 * and bounded, so hostile input costs the API no more than an ordinary request.
 *
 * - 14 KB paths of each pattern's worst shape with `Impersonate-*` headers, a 12 KB header name,
 *   long token-like credentials and 1 MB bodies of token text are answered (403/401/404/400) in
 *   time bounded by a multiple of an ordinary authenticated request — alone and 20 at a time
 *   (before: ~0.25 s of redaction per request, one after another on the event loop);
 * - what a client nests deeper than the redaction depth never reaches a log line, and no logged
 *   path or header is longer than the access log's cap.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOGGED_TEXT_CHARS } from '../../pkg/http/access-log/index.ts';
import { LIMITS } from '../../pkg/log/index.ts';
import { captureLogs } from '../auth/support.ts';
import { basic, client, startService, type TestService } from '../gateway/support.ts';
import { createNamespace } from '../support/kube.ts';
import { atLength } from './scale.ts';

const logs = captureLogs();
let ns: string;
let open: TestService;
let api: TestService;
let authorization: string;

const repeatTo = (unit: string, chars: number) => unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

// Secrets a client hides below the redaction depth: one opaque (only never logging the object
// keeps it out), one under a secret key name, one in a token format.
const DEEP_PLAIN = `deep-plain-${randomBytes(12).toString('hex')}`;
const DEEP_PASSWORD = `deep-pw-${randomBytes(12).toString('hex')}`;
const DEEP_TOKEN = `sk-svc-${randomBytes(24).toString('base64url')}`;
const nest = (depth: number, leaf: unknown): unknown =>
  depth === 0 ? leaf : { inner: nest(depth - 1, leaf) };
const deep = () =>
  nest(LIMITS.depth + 8, { plain: DEEP_PLAIN, password: DEEP_PASSWORD, note: `key ${DEEP_TOKEN}` });

interface Hostile {
  name: string;
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  status: number;
}

function hostile(): Hostile[] {
  const agents = `/v1/namespaces/${ns}/agents`;
  const tokenText = repeatTo(
    `sk-proj-${'a-'.repeat(20)} Bearer eyJ${'a.'.repeat(30)} password=x://user:`,
    1_000_000,
  );
  const json = { 'content-type': 'application/json' };
  const kinds: Hostile[] = [
    { name: '14 KB "a-" path, Impersonate-User', path: `/v1/${repeatTo('a-', 14_000)}`, status: 403 },
    {
      name: '14 KB "eyJ"+"a." path, Impersonate-Group',
      path: `/v1/eyJ${repeatTo('a.', 14_000)}`,
      status: 403,
    },
    {
      name: '14 KB "x://user:" path, Impersonate-User',
      path: `/v1/${repeatTo('x://user:', 14_000)}`,
      status: 403,
    },
    { name: '14 KB "sk-" path, Impersonate-User', path: `/v1/${repeatTo('sk-', 14_000)}`, status: 403 },
    {
      name: 'Impersonate-Extra header with a 12 KB name',
      path: agents,
      headers: { [`impersonate-extra-${repeatTo('a-', 12_000)}`]: 'x' },
      status: 403,
    },
    {
      name: '12 KB token-like bearer',
      path: agents,
      headers: { authorization: `Bearer eyJ${repeatTo('a.', 12_000)}` },
      status: 401,
    },
    {
      name: '12 KB "sk-" X-API-Key',
      path: agents,
      headers: { 'x-api-key': repeatTo('sk-', 12_000) },
      status: 401,
    },
    {
      name: 'authenticated 14 KB path (no route)',
      path: `/v1/${repeatTo('a-', 14_000)}`,
      headers: { authorization },
      status: 404,
    },
    {
      name: 'authenticated, 12 KB PEM-like and token-like headers',
      path: agents,
      headers: {
        authorization,
        'x-note': repeatTo('-----BEGIN RSA PRIVATE KEY-----', 6_000),
        'x-trace': repeatTo('password=', 6_000),
      },
      status: 200,
    },
    {
      name: '1 MB of token text as a JSON body',
      method: 'POST',
      path: agents,
      headers: { authorization, ...json },
      body: tokenText,
      status: 400,
    },
    {
      name: '1 MB chat completion of token text',
      method: 'POST',
      path: '/compat/v1/chat/completions',
      headers: { authorization, ...json },
      body: JSON.stringify({ model: 'agent/nobody', messages: [{ role: 'user', content: tokenText }] }),
      status: 404,
    },
  ];
  return kinds.map((h) =>
    // The four path cases carry the impersonation header that makes them refused unauthenticated.
    h.status === 403 && !h.headers
      ? {
          ...h,
          headers: {
            [h.name.includes('Group') ? 'impersonate-group' : 'impersonate-user']: 'system:admin',
          },
        }
      : h,
  );
}

async function timed(h: Hostile): Promise<{ status: number; ms: number }> {
  const t0 = performance.now();
  const res = await fetch(`${api.url}${h.path}`, {
    method: h.method ?? 'GET',
    headers: h.headers,
    body: h.body,
  });
  await res.arrayBuffer();
  return { status: res.status, ms: performance.now() - t0 };
}

const ordinary = (): Hostile => ({
  name: 'ordinary',
  path: `/v1/namespaces/${ns}/agents`,
  headers: { authorization },
  status: 200,
});

beforeAll(async () => {
  ns = await createNamespace('sec-redaction');
  open = await startService({ namespace: ns, logger: logs.logger });
  api = await startService({
    namespace: ns,
    logger: logs.logger,
    env: { AUTH_MODE: 'basic' },
    cache: open.cache,
  });
  const key = await client(open.url).post('/v1/api-keys', { name: 'redaction' });
  expect(key.status, key.text).toBe(201);
  authorization = basic(key.body.public_key, key.body.secret_key);
  // The first use verifies the key with bcrypt; after it, the verified-key cache answers.
  expect((await timed(ordinary())).status).toBe(200);
}, 60_000);

afterAll(async () => {
  await api?.close();
  await open?.close();
});

/** Median of an ordinary authenticated list: what every bound below is relative to. */
async function baseline(): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 15; i++) times.push((await timed(ordinary())).ms);
  return median(times);
}

describe('hostile requests cost what an ordinary one does', () => {
  it('answers each hostile request within a small multiple of an ordinary request', async () => {
    const base = await baseline();
    const bound = Math.max(20 * base, 100);
    for (const h of hostile()) {
      const runs: number[] = [];
      for (let i = 0; i < 5; i++) {
        const r = await timed(h);
        expect(r.status, h.name).toBe(h.status);
        runs.push(r.ms);
      }
      expect(
        median(runs),
        `${h.name}: median ${median(runs).toFixed(1)} ms, ordinary ${base.toFixed(1)} ms`,
      ).toBeLessThan(bound);
    }
  }, 120_000);

  it('keeps an ordinary request fast while 20 hostile ones are in flight', async () => {
    const base = await baseline();
    const kinds = hostile();
    for (let round = 0; round < atLength(3); round++) {
      const flood = Array.from({ length: 20 }, (_, i) => timed(kinds[(i + round) % kinds.length] as Hostile));
      const normal = await timed(ordinary());
      const answers = await Promise.all(flood);
      expect(normal.status).toBe(200);
      expect(answers.every((a) => a.status < 500)).toBe(true);
      expect(
        normal.ms,
        `ordinary under 20 hostile: ${normal.ms.toFixed(1)} ms, alone ${base.toFixed(1)} ms`,
      ).toBeLessThan(Math.max(50 * base, 1500));
    }
  }, 120_000);
});

describe('what reaches the log', () => {
  it('never holds what a client nested below the depth limit, nor a path or header past its cap', async () => {
    const authed = client(api.url, { authorization });
    const answers = [
      await authed.post(`/v1/namespaces/${ns}/agents`, {
        name: 'deep',
        spec: { prompt: 'p', extra: deep() },
      }),
      await authed.post('/compat/v1/chat/completions', {
        model: 'agent/nobody',
        messages: [{ role: 'user', content: 'hi' }],
        metadata: deep(),
      }),
      await authed.post('/compat/v1/chat/completions', deep()),
      await authed.post(`/v1/namespaces/${ns}/queries`, { name: 'deep-q', spec: { input: deep() } }),
      await authed.call('PATCH', `/v1/namespaces/${ns}/agents/nobody`, deep()),
      await authed.post(`/v1/no-such-route/${repeatTo('a-', 2_000)}`, deep()),
      await client(api.url).post(`/v1/namespaces/${ns}/agents`, deep(), {
        'impersonate-user': 'system:admin',
      }),
    ];
    for (const a of answers) expect(a.status, a.text.slice(0, 300)).toBeLessThan(500);
    for (const h of hostile()) await timed(h);

    const text = logs.text();
    expect(text).toContain('"msg":"request"'); // the trace-level access log was on
    for (const secret of [DEEP_PLAIN, DEEP_PASSWORD, DEEP_TOKEN]) expect(text).not.toContain(secret);
    const capped = LOGGED_TEXT_CHARS + 40; // the cut text and its `…[truncated N bytes]` marker
    for (const line of logs.lines) {
      const rec = JSON.parse(line) as { path?: unknown; header?: unknown; headers?: Record<string, string> };
      for (const v of [rec.path, rec.header])
        if (typeof v === 'string') expect(v.length).toBeLessThan(capped);
      for (const [k, v] of Object.entries(rec.headers ?? {})) {
        expect(k.length).toBeLessThan(capped);
        expect(v.length).toBeLessThan(capped);
      }
    }
  }, 60_000);
});
