import { createHash } from 'node:crypto';
import type { Logger } from '../../log/index.ts';
import { ProviderUnavailable, type TokenResult } from '../oidc/client.ts';
import type { Session } from './store.ts';

/** The spec: the provider's tokens are refreshed every 10 minutes (and when the window regains focus). */
export const REFRESH_EVERY_SEC = 600;
/** An access token this close to its expiry is refreshed before use, whatever its age. */
export const EXPIRY_SKEW_SEC = 30;
/** A focus-triggered refresh is skipped for tokens younger than this: switching tabs is frequent. */
export const FOCUS_MIN_AGE_SEC = 60;
/** How long a refresh result is kept for requests still carrying the previous cookie. */
const SHARE_RESULT_MS = 60_000;

export type Freshness =
  | { kind: 'fresh'; session: Session }
  | { kind: 'refreshed'; session: Session }
  | { kind: 'failed'; reason: string };

export interface RefresherOptions {
  refresh: (refreshToken: string) => Promise<TokenResult>;
  nowSec: () => number;
  logger: Logger;
  everySec?: number;
}

/**
 * Keeps a session's access token usable. One refresh per refresh token at a time, its result shared
 * for a minute: a page fires several API calls at once, all carrying the same cookie, and providers
 * that rotate refresh tokens treat a second use of the old one as theft and revoke the grant.
 * (Per replica: several dashboard replicas can still race; the provider's reuse interval covers that.)
 */
export class TokenRefresher {
  readonly #opts: RefresherOptions;
  readonly #inflight = new Map<string, Promise<TokenResult>>();

  constructor(opts: RefresherOptions) {
    this.#opts = opts;
  }

  due(session: Session, force = false): boolean {
    const now = this.#opts.nowSec();
    const age = now - session.tokensAt;
    if (age >= (this.#opts.everySec ?? REFRESH_EVERY_SEC)) return true;
    if (session.accessTokenExpiresAt !== undefined && session.accessTokenExpiresAt - now <= EXPIRY_SKEW_SEC)
      return true;
    return force && age >= FOCUS_MIN_AGE_SEC;
  }

  async ensureFresh(session: Session, force = false): Promise<Freshness> {
    if (!this.due(session, force)) return { kind: 'fresh', session };
    const now = this.#opts.nowSec();
    const expired = session.accessTokenExpiresAt !== undefined && session.accessTokenExpiresAt <= now;
    if (!session.refreshToken)
      return expired
        ? { kind: 'failed', reason: 'access token expired; no refresh token' }
        : { kind: 'fresh', session };
    try {
      const tokens = await this.#shared(session.refreshToken);
      this.#opts.logger.debug({ sub: session.user.sub }, 'access token refreshed');
      return {
        kind: 'refreshed',
        session: {
          ...session,
          accessToken: tokens.accessToken,
          refreshToken: tokens.refreshToken ?? session.refreshToken,
          idToken: tokens.idToken ?? session.idToken,
          accessTokenExpiresAt: tokens.expiresIn !== undefined ? now + tokens.expiresIn : undefined,
          tokensAt: now,
        },
      };
    } catch (err) {
      // A provider that is down is not a reason to sign the user out while the token still works.
      if (err instanceof ProviderUnavailable && !expired) {
        this.#opts.logger.warn({ reason: err.message }, 'token refresh postponed: provider unavailable');
        return { kind: 'fresh', session };
      }
      const reason = describe(err);
      this.#opts.logger.info({ sub: session.user.sub, reason }, 'token refresh failed: signing out');
      return { kind: 'failed', reason };
    }
  }

  #shared(refreshToken: string): Promise<TokenResult> {
    const key = createHash('sha256').update(refreshToken).digest('base64url');
    let pending = this.#inflight.get(key);
    if (!pending) {
      pending = this.#opts.refresh(refreshToken);
      this.#inflight.set(key, pending);
      // Successes are shared a while; a failure is forgotten at once so the next request retries.
      pending.then(
        () => setTimeout(() => this.#inflight.delete(key), SHARE_RESULT_MS).unref(),
        () => this.#inflight.delete(key),
      );
    }
    return pending;
  }
}

function describe(err: unknown): string {
  const e = err as { error?: string; error_description?: string; message?: string };
  return e.error
    ? `${e.error}${e.error_description ? `: ${e.error_description}` : ''}`
    : (e.message ?? String(err));
}
