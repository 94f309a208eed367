import type { Context } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';

/**
 * Browsers keep at most ~4096 bytes per cookie, name and attributes included. A session holding
 * the provider's id, access and refresh tokens is often larger, so its value is split over
 * `<name>.0`, `<name>.1`, … (the NextAuth convention) and joined again on read.
 */
export const CHUNK_SIZE = 3800;

export interface CookieJarOptions {
  /** `Secure` and the `__Secure-` name prefix: set when the dashboard is served over https. */
  secure: boolean;
  /** The base path (or `/`): cookies of one tenant never reach another tenant's dashboard. */
  path: string;
}

export class ChunkedCookie {
  readonly name: string;
  readonly #opts: CookieJarOptions;

  constructor(baseName: string, opts: CookieJarOptions) {
    this.name = opts.secure ? `__Secure-${baseName}` : baseName;
    this.#opts = opts;
  }

  /** The joined value, or undefined when the request carries none. */
  read(c: Context): string | undefined {
    const all = getCookie(c);
    const whole = all[this.name];
    if (whole) return whole;
    const parts = this.#chunkNames(all)
      .sort((a, b) => a.index - b.index)
      .map((p) => all[p.name] ?? '');
    return parts.length ? parts.join('') : undefined;
  }

  write(c: Context, value: string, maxAgeSec: number): void {
    const all = getCookie(c);
    const chunks: string[] = [];
    for (let i = 0; i < value.length; i += CHUNK_SIZE) chunks.push(value.slice(i, i + CHUNK_SIZE));
    const written = new Set<string>();
    if (chunks.length === 1) {
      this.#set(c, this.name, value, maxAgeSec);
      written.add(this.name);
    } else {
      chunks.forEach((chunk, i) => {
        const name = `${this.name}.${i}`;
        this.#set(c, name, chunk, maxAgeSec);
        written.add(name);
      });
    }
    // A session that shrank leaves chunks behind: expire them, or a later read joins stale parts.
    for (const stale of this.#present(all)) if (!written.has(stale)) this.#set(c, stale, '', 0);
  }

  clear(c: Context): void {
    for (const name of this.#present(getCookie(c))) this.#set(c, name, '', 0);
  }

  #present(all: Record<string, string>): string[] {
    return [
      ...(all[this.name] !== undefined ? [this.name] : []),
      ...this.#chunkNames(all).map((p) => p.name),
    ];
  }

  #chunkNames(all: Record<string, string>): Array<{ name: string; index: number }> {
    const prefix = `${this.name}.`;
    return Object.keys(all)
      .filter((k) => k.startsWith(prefix) && /^\d+$/.test(k.slice(prefix.length)))
      .map((name) => ({ name, index: Number(name.slice(prefix.length)) }));
  }

  #set(c: Context, name: string, value: string, maxAgeSec: number): void {
    setCookie(c, name, value, {
      path: this.#opts.path,
      httpOnly: true,
      secure: this.#opts.secure,
      sameSite: 'Lax',
      maxAge: maxAgeSec,
    });
  }
}
