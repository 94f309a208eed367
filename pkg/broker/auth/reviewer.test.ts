import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { errorHandler, requestId } from '../../http/index.ts';
import { createLogger } from '../../log/index.ts';
import { brokerAuth } from './middleware.ts';
import { lazyTokenReviewer, ReviewerUnavailable, type TokenReviewer } from './reviewer.ts';

const READER = 'system:serviceaccount:tenant-a:berth-api';

/** A reviewer that accepts every token as READER and records what it was asked. */
function acceptingReviewer(asked: string[] = []): TokenReviewer {
  return {
    async review(token, audiences) {
      asked.push(token);
      return { authenticated: true, username: READER, audiences };
    },
  };
}

/** A load the test finishes by hand, counting how often it was started. */
function manualLoad() {
  const state = {
    starts: 0,
    finish: (_r: TokenReviewer) => {},
    fail: (_e: Error) => {},
  };
  const load = () => {
    state.starts++;
    return new Promise<TokenReviewer>((resolve, reject) => {
      state.finish = resolve;
      state.fail = reject;
    });
  };
  return { load, state };
}

describe('lazyTokenReviewer', () => {
  it('loads nothing until the first review, then once for concurrent first reviews', async () => {
    const { load, state } = manualLoad();
    const reviewer = lazyTokenReviewer(load);
    expect(state.starts).toBe(0);
    const asked: string[] = [];
    const first = reviewer.review('a', ['berth-broker']);
    const second = reviewer.review('b', ['berth-broker']);
    await Promise.resolve(); // let the load start
    expect(state.starts).toBe(1);
    state.finish(acceptingReviewer(asked));
    expect(await first).toMatchObject({ authenticated: true, username: READER });
    expect(await second).toMatchObject({ authenticated: true, username: READER });
    expect(await reviewer.review('c', ['berth-broker'])).toMatchObject({ authenticated: true });
    expect(state.starts).toBe(1);
    expect(asked).toEqual(['a', 'b', 'c']);
  });

  it('rejects the reviews that waited on a failed load with ReviewerUnavailable, and loads again at the next', async () => {
    const { load, state } = manualLoad();
    const reviewer = lazyTokenReviewer(load);
    const first = reviewer.review('a', ['berth-broker']);
    const second = reviewer.review('b', ['berth-broker']);
    await Promise.resolve();
    state.fail(new Error('Cannot find module @kubernetes/client-node'));
    for (const r of [first, second]) {
      const err = await r.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ReviewerUnavailable);
      expect((err as Error).message).toMatch(/could not be loaded: Cannot find module/);
    }
    expect(state.starts).toBe(1);
    const third = reviewer.review('c', ['berth-broker']);
    await Promise.resolve();
    expect(state.starts).toBe(2);
    state.finish(acceptingReviewer());
    expect(await third).toMatchObject({ authenticated: true, username: READER });
  });

  it('turns a load that throws synchronously into ReviewerUnavailable', async () => {
    let calls = 0;
    const reviewer = lazyTokenReviewer(() => {
      calls++;
      if (calls === 1) throw new Error('kubeconfig: no such file');
      return Promise.resolve(acceptingReviewer());
    });
    await expect(reviewer.review('a', ['berth-broker'])).rejects.toBeInstanceOf(ReviewerUnavailable);
    expect(await reviewer.review('a', ['berth-broker'])).toMatchObject({ authenticated: true });
    expect(calls).toBe(2);
  });

  it('behind brokerAuth: a failed load answers 503 auth_unavailable, the next request loads and is served', async () => {
    let calls = 0;
    const reviewer = lazyTokenReviewer(async () => {
      calls++;
      if (calls === 1) throw new Error('import failed');
      return acceptingReviewer();
    });
    const logger = createLogger({ name: 't', level: 'silent', destination: { write: () => {} } });
    const a = new Hono();
    a.use('*', requestId());
    a.use(
      '*',
      brokerAuth({
        config: {
          mode: 'serviceaccount',
          namespace: 'tenant-a',
          writers: [],
          cacheTtlMs: 30_000,
          cacheSize: 10,
        },
        reviewer,
        logger,
      }),
    );
    a.onError(errorHandler(logger));
    a.get('/health', (c) => c.json({ ok: true }));
    a.get('/messages', (c) => c.json({ ok: true }));
    const get = (path: string) => a.request(path, { headers: { authorization: 'Bearer t' } });

    expect((await get('/health')).status).toBe(200);
    expect(calls).toBe(0); // open paths never load the client
    const down = await get('/messages');
    expect(down.status).toBe(503);
    expect(((await down.json()) as { error: { code: string } }).error.code).toBe('auth_unavailable');
    expect((await get('/messages')).status).toBe(200);
    expect(calls).toBe(2);
  });
});
