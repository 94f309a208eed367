import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { errorHandler, requestId } from '../../http/index.ts';
import { createLogger } from '../../log/index.ts';
import { tokenKey } from './cache.ts';
import { type BrokerAuthConfig, loadBrokerAuthConfig } from './config.ts';
import { brokerAuth, rightsOf } from './middleware.ts';
import { ReviewerUnavailable, type ReviewResult, type TokenReviewer } from './reviewer.ts';

const CONTROLLER = 'system:serviceaccount:berth-system:berth-controller';
const config: BrokerAuthConfig = {
  mode: 'serviceaccount',
  namespace: 'tenant-a',
  writers: [CONTROLLER],
  cacheTtlMs: 30_000,
  cacheSize: 100,
};

/** A reviewer that knows a few tokens, counts its calls and can be made unreachable. */
function fakeReviewer(tokens: Record<string, ReviewResult>) {
  const state = { calls: 0, down: false, seen: [] as string[][] };
  const reviewer: TokenReviewer = {
    async review(token, audiences) {
      state.calls++;
      state.seen.push(audiences);
      if (state.down) throw new ReviewerUnavailable('connect ECONNREFUSED');
      const t = tokens[token];
      if (!t) return { authenticated: false, error: 'invalid bearer token' };
      // As the API server does: valid only for an audience asked for, and it says which.
      const both = (t.audiences ?? []).filter((x) => audiences.includes(x));
      return both.length
        ? { ...t, audiences: both }
        : { authenticated: false, error: 'token audiences is invalid' };
    },
  };
  return { reviewer, state };
}

const ok = (username: string): ReviewResult => ({
  authenticated: true,
  username,
  audiences: ['berth-broker'],
});

/** Served without a token. */
const OPEN_PATHS = ['/health', '/readyz', '/metrics', '/openapi.json', '/api-docs', '/api-docs/assets/x.css'];

function app(reviewer: TokenReviewer, now?: () => number) {
  const lines: string[] = [];
  const logger = createLogger({
    name: 't',
    level: 'debug',
    destination: { write: (l: string) => lines.push(l) },
  });
  const a = new Hono();
  a.use('*', requestId());
  a.use('*', brokerAuth({ config, reviewer, logger, now }));
  a.onError(errorHandler(logger));
  for (const p of [...OPEN_PATHS, '/messages'])
    a.get(p, (c) => c.json({ ok: true, caller: c.get('brokerCaller' as never) ?? null }));
  a.post('/messages', (c) => c.json({ ok: true }, 201));
  a.delete('/queries/:q/messages', (c) => c.body(null, 204));
  return { a, lines };
}

const call = (a: Hono, method: string, path: string, token?: string) =>
  a.request(path, { method, headers: token ? { authorization: `Bearer ${token}` } : {} });

describe('brokerAuth', () => {
  const tokens = {
    ctl: ok(CONTROLLER),
    own: ok('system:serviceaccount:tenant-a:berth-api'),
    other: ok('system:serviceaccount:tenant-b:berth-api'),
    prefix: ok('system:serviceaccount:tenant-ab:x'),
    human: ok('alice'),
    wrongAud: { authenticated: true, username: CONTROLLER, audiences: ['https://kubernetes.default.svc'] },
  };

  it('leaves health, readiness, metrics and docs open', async () => {
    const { reviewer, state } = fakeReviewer(tokens);
    const { a } = app(reviewer);
    for (const p of OPEN_PATHS) expect((await call(a, 'GET', p)).status, p).toBe(200);
    expect(state.calls).toBe(0);
  });

  it('answers 401 with WWW-Authenticate and the envelope without a token, with a malformed or refused one', async () => {
    const { reviewer } = fakeReviewer(tokens);
    const { a } = app(reviewer);
    for (const res of [
      await call(a, 'GET', '/messages'),
      await a.request('/messages', { headers: { authorization: 'Basic dTpw' } }),
      await call(a, 'GET', '/messages', 'forged'),
      await call(a, 'POST', '/messages', 'wrongAud'),
      await call(a, 'GET', '/messages', 'x'.repeat(20_000)),
    ]) {
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      const body = (await res.json()) as { error: { code: string; requestId: string } };
      expect(body.error.code).toBe('unauthorized');
      expect(body.error.requestId).toBeTruthy();
    }
  });

  it('asks for the berth-broker audience and answers 503 when the API server does not answer', async () => {
    const { reviewer, state } = fakeReviewer(tokens);
    const { a } = app(reviewer);
    state.down = true;
    const res = await call(a, 'GET', '/messages', 'own');
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('auth_unavailable');
    expect(state.seen[0]).toEqual(['berth-broker', 'berth-broker:tenant-a']);
    // An outage is not remembered: the next call is reviewed again.
    state.down = false;
    expect((await call(a, 'GET', '/messages', 'own')).status).toBe(200);
  });

  it("accepts the controller's token minted for this namespace's broker, refuses one minted for another's", async () => {
    const { reviewer } = fakeReviewer({
      mine: { authenticated: true, username: CONTROLLER, audiences: ['berth-broker:tenant-a'] },
      theirs: { authenticated: true, username: CONTROLLER, audiences: ['berth-broker:tenant-b'] },
      selfMinted: {
        authenticated: true,
        username: 'system:serviceaccount:tenant-b:x',
        audiences: ['berth-broker:tenant-a'],
      },
    });
    const { a } = app(reviewer);
    expect((await call(a, 'POST', '/messages', 'mine')).status).toBe(201);
    expect((await call(a, 'DELETE', '/queries/q/messages', 'mine')).status).toBe(204);
    expect((await call(a, 'POST', '/messages', 'theirs')).status).toBe(401);
    expect((await call(a, 'GET', '/messages', 'theirs')).status).toBe(401);
    // Any account may mint a token of this audience for itself: it is still not the controller.
    expect((await call(a, 'POST', '/messages', 'selfMinted')).status).toBe(403);
    expect((await call(a, 'GET', '/messages', 'selfMinted')).status).toBe(403);
  });

  it('lets the accounts BROKER_MEMORY_SUBJECTS names call the memory contract, and nothing more', async () => {
    const tokens = {
      agent: ok('system:serviceaccount:tenant-a:agent'),
      plain: ok('system:serviceaccount:tenant-a:berth-api'),
    };
    const lines: string[] = [];
    const logger = createLogger({
      name: 't',
      level: 'silent',
      destination: { write: (l: string) => lines.push(l) },
    });
    const cfg = { ...config, memoryCallers: ['system:serviceaccount:tenant-a:agent'] };
    const a = new Hono();
    a.use('*', brokerAuth({ config: cfg, reviewer: fakeReviewer(tokens).reviewer, logger }));
    a.onError(errorHandler(logger));
    a.all('*', (c) => c.json({ ok: true }));
    const as = (method: string, path: string, token: string) => call(a as never, method, path, token);
    for (const [m, p] of [
      ['POST', '/conversations'],
      ['DELETE', '/conversations/c-1'],
      ['POST', '/messages'],
    ]) {
      expect((await as(m as string, p as string, 'agent')).status, `${m} ${p}`).toBe(200);
      expect((await as(m as string, p as string, 'plain')).status, `${m} ${p}`).toBe(403);
    }
    // Chunks, events, traces, purges and look-alike paths stay the controller's.
    for (const [m, p] of [
      ['POST', '/stream/q'],
      ['POST', '/events'],
      ['POST', '/v1/traces'],
      ['DELETE', '/messages'],
      ['DELETE', '/conversations'],
      ['DELETE', '/queries/q/messages'],
      ['DELETE', '/conversations/c-1/queries/q/messages'],
      ['DELETE', '/conversations/c-1%2Fqueries%2Fq%2Fmessages/x'],
      ['POST', '/messages/'],
    ])
      expect((await as(m as string, p as string, 'agent')).status, `${m} ${p}`).toBe(403);
  });

  it('refuses memory callers of another namespace at start', () => {
    expect(() =>
      loadBrokerAuthConfig({
        BROKER_AUTH: 'serviceaccount',
        NAMESPACE: 'tenant-a',
        BROKER_MEMORY_SUBJECTS: 'system:serviceaccount:tenant-a:agent, system:serviceaccount:tenant-b:agent',
      }),
    ).toThrow(
      /only service accounts of namespace tenant-a may be memory callers, not system:serviceaccount:tenant-b:agent/,
    );
    expect(
      loadBrokerAuthConfig({
        BROKER_AUTH: 'serviceaccount',
        NAMESPACE: 'tenant-a',
        BROKER_MEMORY_SUBJECTS: 'system:serviceaccount:tenant-a:*',
      }).memoryCallers,
    ).toEqual(['system:serviceaccount:tenant-a:*']);
  });

  it('lets the controller write, read and purge; own-namespace accounts only read; others get 403', async () => {
    const { reviewer } = fakeReviewer(tokens);
    const { a } = app(reviewer);
    expect((await call(a, 'POST', '/messages', 'ctl')).status).toBe(201);
    expect((await call(a, 'DELETE', '/queries/q/messages', 'ctl')).status).toBe(204);
    const read = await call(a, 'GET', '/messages', 'ctl');
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual({ ok: true, caller: CONTROLLER });
    expect((await call(a, 'GET', '/messages', 'own')).status).toBe(200);
    expect((await call(a, 'HEAD', '/messages', 'own')).status).toBe(200);
    expect((await call(a, 'POST', '/messages', 'own')).status).toBe(403);
    expect((await call(a, 'DELETE', '/queries/q/messages', 'own')).status).toBe(403);
    for (const t of ['other', 'prefix', 'human']) {
      const res = await call(a, 'GET', '/messages', t);
      expect(res.status, t).toBe(403);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('forbidden');
    }
  });

  it('reuses a verdict by token hash for the cache lifetime, then reviews again; never logs the token', async () => {
    let now = 1_000;
    const { reviewer, state } = fakeReviewer(tokens);
    const { a, lines } = app(reviewer, () => now);
    await call(a, 'GET', '/messages', 'own');
    await call(a, 'GET', '/messages', 'own');
    await call(a, 'GET', '/messages', 'forged');
    await call(a, 'GET', '/messages', 'forged');
    expect(state.calls).toBe(2);
    now += 30_001;
    await call(a, 'GET', '/messages', 'own');
    expect(state.calls).toBe(3);
    expect(tokenKey('own')).not.toContain('own');
    expect(lines.join('\n')).not.toMatch(/\b(own|forged)\b"/);
  });
});

describe('rightsOf', () => {
  it('matches writers exactly and readers by namespace prefix with its colon', () => {
    expect(rightsOf(CONTROLLER, config)).toEqual(['write', 'read', 'memory']);
    expect(rightsOf(`${CONTROLLER}x`, config)).toEqual([]);
    expect(rightsOf('system:serviceaccount:tenant-a:default', config)).toEqual(['read']);
    expect(rightsOf('system:serviceaccount:tenant-a', config)).toEqual([]);
  });
});

describe('loadBrokerAuthConfig', () => {
  it('defaults to none, needs a namespace with serviceaccount, reads writers', () => {
    expect(loadBrokerAuthConfig({}, '/nonexistent').mode).toBe('none');
    expect(() => loadBrokerAuthConfig({ BROKER_AUTH: 'serviceaccount' }, '/nonexistent')).toThrow(
      /NAMESPACE/,
    );
    expect(() => loadBrokerAuthConfig({ BROKER_AUTH: 'tls' }, '/nonexistent')).toThrow(/BROKER_AUTH/);
    const c = loadBrokerAuthConfig(
      { BROKER_AUTH: 'serviceaccount', NAMESPACE: 'tenant-a', BROKER_WRITER_SUBJECTS: 'a, b' },
      '/nonexistent',
    );
    expect(c).toMatchObject({ mode: 'serviceaccount', namespace: 'tenant-a', writers: ['a', 'b'] });
    expect(loadBrokerAuthConfig({ BROKER_AUTH: 'serviceaccount', NAMESPACE: 'x' }).writers).toEqual([
      CONTROLLER,
    ]);
  });
});
