import type { Context } from 'hono';
import type { AuthorizationChecks } from '../oidc/client.ts';
import { ChunkedCookie } from '../session/cookies.ts';
import { Sealer } from '../session/crypto.ts';

/** How long a user may take at the provider's login page. */
export const SIGNIN_TTL_SEC = 15 * 60;

export interface PendingSignin extends AuthorizationChecks {
  /** Where to go after the callback, already made safe. */
  callbackUrl: string;
}

/**
 * The sign-in in progress (state, nonce, PKCE verifier, destination), sealed in a short-lived
 * HTTP-only cookie scoped to the auth routes. `take` always removes it, so a callback works once:
 * a replayed one finds nothing and is refused.
 */
export class PendingSignins {
  readonly #cookie: ChunkedCookie;
  readonly #sealer: Sealer;
  readonly #nowSec: () => number;

  constructor(opts: { secret: string; secure: boolean; path: string; nowSec: () => number }) {
    this.#cookie = new ChunkedCookie('berth.signin', { secure: opts.secure, path: opts.path });
    this.#sealer = new Sealer(opts.secret, 'signin');
    this.#nowSec = opts.nowSec;
  }

  async start(c: Context, pending: PendingSignin): Promise<void> {
    const sealed = await this.#sealer.seal({ ...pending }, this.#nowSec(), SIGNIN_TTL_SEC);
    this.#cookie.write(c, sealed, SIGNIN_TTL_SEC);
  }

  async take(c: Context): Promise<PendingSignin | undefined> {
    const raw = this.#cookie.read(c);
    this.#cookie.clear(c);
    if (!raw) return undefined;
    const p = await this.#sealer.open<Partial<PendingSignin>>(raw, this.#nowSec());
    if (!p?.state || !p.nonce || !p.codeVerifier || !p.callbackUrl) return undefined;
    return { state: p.state, nonce: p.nonce, codeVerifier: p.codeVerifier, callbackUrl: p.callbackUrl };
  }
}
