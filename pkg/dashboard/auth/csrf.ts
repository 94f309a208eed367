import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';

/**
 * Double-submit CSRF tokens for the state-changing auth POSTs (`/api/auth/signout`,
 * `/api/auth/federated-signout`, the header's Sign out form), as NextAuth's
 * `/api/auth/csrf`: the cookie holds `<token>.<hmac>`, the form sends `<token>`; a page on another
 * site can neither read the cookie nor forge the HMAC.
 */
export class CsrfTokens {
  readonly name: string;
  readonly #key: Buffer;
  readonly #opts: { secure: boolean; path: string };

  constructor(secret: string, opts: { secure: boolean; path: string }) {
    this.name = opts.secure ? '__Secure-berth.csrf-token' : 'berth.csrf-token';
    this.#key = createHmac('sha256', secret).update('Berth dashboard csrf key').digest();
    this.#opts = opts;
  }

  /** The token of this browser, issued (cookie set) when it has none yet. */
  issue(c: Context): string {
    const current = this.#valid(getCookie(c, this.name));
    if (current) return current;
    const token = randomBytes(32).toString('base64url');
    setCookie(c, this.name, `${token}.${this.#mac(token)}`, {
      path: this.#opts.path,
      httpOnly: true,
      secure: this.#opts.secure,
      sameSite: 'Lax',
    });
    return token;
  }

  verify(c: Context, submitted: string | undefined): boolean {
    const current = this.#valid(getCookie(c, this.name));
    if (!current || !submitted) return false;
    const a = Buffer.from(current);
    const b = Buffer.from(submitted);
    return a.length === b.length && timingSafeEqual(a, b);
  }

  #valid(cookie: string | undefined): string | undefined {
    const [token, mac] = (cookie ?? '').split('.');
    if (!token || !mac) return undefined;
    const expected = Buffer.from(this.#mac(token));
    const given = Buffer.from(mac);
    return expected.length === given.length && timingSafeEqual(expected, given) ? token : undefined;
  }

  #mac(token: string): string {
    return createHmac('sha256', this.#key).update(token).digest('base64url');
  }
}
