import type { Context } from 'hono';
import { ChunkedCookie } from './cookies.ts';
import { Sealer } from './crypto.ts';

/** Who signed in, as the ID token said: what `GET /api/auth/session` shows. */
export interface SessionUser {
  sub: string;
  name?: string;
  email?: string;
  groups?: string[];
}

/** The session: the user and the provider's tokens, which only ever leave in requests to the API. */
export interface Session {
  user: SessionUser;
  accessToken: string;
  refreshToken?: string;
  /** Kept for the federated sign-out's `id_token_hint`. */
  idToken?: string;
  /** When the access token expires (epoch seconds), when the provider said. */
  accessTokenExpiresAt?: number;
  /** When the tokens were obtained: at sign-in or at the last refresh (epoch seconds). */
  tokensAt: number;
}

export interface StoredSession {
  session: Session;
  /** When this cookie was issued (epoch seconds): the sliding TTL counts from here. */
  issuedAt: number;
  /** When it expires unless used again (epoch seconds). */
  expiresAt: number;
}

export interface SessionStoreOptions {
  secret: string;
  secure: boolean;
  path: string;
  /** Inactivity limit: the cookie and the JWE both expire this long after the last use. */
  ttlSec: number;
  /** Re-issue the cookie at most this often (avoids a Set-Cookie on every proxied call). */
  slideEverySec?: number;
  nowSec: () => number;
}

/**
 * The encrypted session cookie: stateless (the spec: no server-side session store), chunked when
 * large, HTTP-only, SameSite=Lax, Secure behind https, scoped to the base path.
 */
export class SessionStore {
  readonly cookie: ChunkedCookie;
  readonly #sealer: Sealer;
  readonly #opts: SessionStoreOptions;

  constructor(opts: SessionStoreOptions) {
    this.#opts = opts;
    this.cookie = new ChunkedCookie('berth.session-token', { secure: opts.secure, path: opts.path });
    this.#sealer = new Sealer(opts.secret, 'session');
  }

  async read(c: Context): Promise<StoredSession | undefined> {
    const raw = this.cookie.read(c);
    if (!raw) return undefined;
    const claims = await this.#sealer.open<{ session?: Session; iat: number; exp: number }>(
      raw,
      this.#opts.nowSec(),
    );
    if (!claims?.session?.accessToken || !claims.session.user?.sub) return undefined;
    return { session: claims.session, issuedAt: claims.iat, expiresAt: claims.exp };
  }

  /**
   * Seals and sets the session, expiring a full TTL from now — or at `keepExpiry`, for writes that
   * are not user activity (the background token refresh must not keep an idle session alive).
   */
  async write(c: Context, session: Session, keepExpiry?: number): Promise<number> {
    const now = this.#opts.nowSec();
    const ttl = keepExpiry !== undefined ? Math.max(1, keepExpiry - now) : this.#opts.ttlSec;
    const sealed = await this.#sealer.seal({ session }, now, ttl);
    this.cookie.write(c, sealed, ttl);
    return now + ttl;
  }

  /** Pushes the expiry out after use (the sliding TTL); rewrites at once when the tokens changed. */
  async slide(c: Context, stored: StoredSession, changed: boolean): Promise<number> {
    const every = this.#opts.slideEverySec ?? 60;
    if (changed || this.#opts.nowSec() - stored.issuedAt >= every) return this.write(c, stored.session);
    return stored.expiresAt;
  }

  clear(c: Context): void {
    this.cookie.clear(c);
  }
}
