import { describe, expect, it } from 'vitest';
import { createLogger } from '../../log/index.ts';
import { ProviderUnavailable, type TokenResult } from '../oidc/client.ts';
import { TokenRefresher } from './refresh.ts';
import type { Session } from './store.ts';

const logger = createLogger({ level: 'silent' });
const T0 = 1_800_000_000;

function setup(refresh: (rt: string) => Promise<TokenResult>) {
  let now = T0;
  const calls: string[] = [];
  const refresher = new TokenRefresher({
    refresh: (rt) => {
      calls.push(rt);
      return refresh(rt);
    },
    nowSec: () => now,
    logger,
  });
  const advance = (s: number) => {
    now += s;
  };
  return { refresher, calls, advance };
}

const session = (extra: Partial<Session> = {}): Session => ({
  user: { sub: 'u' },
  accessToken: 'at-1',
  refreshToken: 'rt-1',
  idToken: 'id-1',
  accessTokenExpiresAt: T0 + 3600,
  tokensAt: T0,
  ...extra,
});

const ok = async (): Promise<TokenResult> => ({ accessToken: 'at-2', refreshToken: 'rt-2', expiresIn: 3600 });

describe('TokenRefresher', () => {
  it('refreshes tokens 10 minutes old, keeping what the provider did not reissue', async () => {
    const { refresher, calls, advance } = setup(async () => ({ accessToken: 'at-2', expiresIn: 300 }));
    advance(599);
    expect((await refresher.ensureFresh(session())).kind).toBe('fresh');
    advance(1);
    const r = await refresher.ensureFresh(session());
    expect(r).toEqual({
      kind: 'refreshed',
      session: session({ accessToken: 'at-2', accessTokenExpiresAt: T0 + 900, tokensAt: T0 + 600 }),
    });
    expect(calls).toEqual(['rt-1']);
  });

  it('refreshes a token about to expire, and on focus only tokens older than a minute', async () => {
    const { refresher, advance } = setup(ok);
    expect(refresher.due(session({ accessTokenExpiresAt: T0 + 30 }))).toBe(true);
    expect(refresher.due(session(), true)).toBe(false);
    advance(60);
    expect(refresher.due(session(), true)).toBe(true);
    expect(refresher.due(session())).toBe(false);
  });

  it('makes one refresh for many concurrent requests carrying the same refresh token', async () => {
    let release: (t: TokenResult) => void = () => {};
    const { refresher, calls, advance } = setup(
      () =>
        new Promise((r) => {
          release = r;
        }),
    );
    advance(700);
    const all = Promise.all([1, 2, 3].map(() => refresher.ensureFresh(session())));
    release(await ok());
    const results = await all;
    expect(calls).toEqual(['rt-1']);
    expect(results.map((r) => r.kind === 'refreshed' && r.session.accessToken)).toEqual([
      'at-2',
      'at-2',
      'at-2',
    ]);
    // A late request with the old cookie gets the same tokens, not a second use of the old refresh token.
    expect(((await refresher.ensureFresh(session())) as { session: Session }).session.refreshToken).toBe(
      'rt-2',
    );
    expect(calls).toEqual(['rt-1']);
  });

  it('fails when the provider refuses the refresh token, and retries after a failure', async () => {
    let fail = true;
    const { refresher, calls, advance } = setup(async () => {
      if (fail) throw Object.assign(new Error('refused'), { error: 'invalid_grant' });
      return ok();
    });
    advance(700);
    expect(await refresher.ensureFresh(session())).toEqual({ kind: 'failed', reason: 'invalid_grant' });
    fail = false;
    expect((await refresher.ensureFresh(session())).kind).toBe('refreshed');
    expect(calls).toHaveLength(2);
  });

  it('keeps a still-valid token while the provider is down, and fails once it has expired', async () => {
    const { refresher, advance } = setup(async () => {
      throw new ProviderUnavailable('refresh', new TypeError('fetch failed'));
    });
    advance(700);
    expect((await refresher.ensureFresh(session())).kind).toBe('fresh');
    advance(3600);
    expect((await refresher.ensureFresh(session())).kind).toBe('failed');
  });

  it('fails a session whose token expired without a refresh token', async () => {
    const { refresher, advance } = setup(ok);
    advance(3600);
    expect(await refresher.ensureFresh(session({ refreshToken: undefined }))).toMatchObject({
      kind: 'failed',
    });
  });
});
