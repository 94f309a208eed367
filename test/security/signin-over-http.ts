/**
 * The dashboard's sign-in driven over plain HTTP, as a user agent without a browser: the real
 * dashboard, the real OpenID provider (oidc-provider with its login form), redirects followed by
 * hand so every `Location` is seen, cookies kept per origin. Fast enough to try dozens of hostile
 * `callbackUrl`s through the whole flow (the browser tests cover the same flow in Chromium).
 */

export class CookieJar {
  readonly #byOrigin = new Map<string, Map<string, string>>();

  store(url: string, res: Response): void {
    const origin = new URL(url).origin;
    const jar = this.#byOrigin.get(origin) ?? new Map<string, string>();
    this.#byOrigin.set(origin, jar);
    for (const line of res.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      // An expiry in the past (or an empty value with Max-Age=0) deletes the cookie.
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(line) || value === '') jar.delete(name);
      else jar.set(name, value);
    }
  }

  header(url: string): string {
    const jar = this.#byOrigin.get(new URL(url).origin);
    return jar ? [...jar].map(([k, v]) => `${k}=${v}`).join('; ') : '';
  }

  has(url: string, name: string): boolean {
    return this.#byOrigin.get(new URL(url).origin)?.has(name) ?? false;
  }
}

export interface Hop {
  url: string;
  status: number;
  location: string | null;
}

/** One request with the jar's cookies, no redirect followed. */
export async function send(
  jar: CookieJar,
  url: string,
  init: { method?: string; body?: URLSearchParams; accept?: string } = {},
): Promise<Response> {
  const headers: Record<string, string> = { accept: init.accept ?? 'text/html' };
  const cookie = jar.header(url);
  if (cookie) headers.cookie = cookie;
  if (init.body) headers['content-type'] = 'application/x-www-form-urlencoded';
  const res = await fetch(url, {
    method: init.method ?? 'GET',
    headers,
    body: init.body,
    redirect: 'manual',
  });
  jar.store(url, res);
  return res;
}

/**
 * Signs `login` in from `start` (a dashboard URL) and returns every hop. The flow ends at the first
 * answer that is not a redirect, or at the first redirect leaving both the dashboard and the
 * provider (never followed: that is what hostile-redirect tests look for).
 */
export async function signInOverHttp(opts: {
  jar: CookieJar;
  start: string;
  issuer: string;
  login: string;
}): Promise<Hop[]> {
  const { jar, issuer } = opts;
  const dashboard = new URL(opts.start).origin;
  const hops: Hop[] = [];
  let url = opts.start;
  for (let i = 0; i < 20; i++) {
    const res = await send(jar, url);
    const location = res.headers.get('location');
    hops.push({ url, status: res.status, location });
    if (location && res.status >= 300 && res.status < 400) {
      await res.body?.cancel();
      const next = new URL(location, url);
      if (next.origin !== dashboard && next.origin !== new URL(issuer).origin) return hops;
      url = next.href;
      continue;
    }
    const text = await res.text();
    const form = /<form[^>]*action="([^"]+)"[^>]*>[\s\S]*?name="prompt" value="login"/.exec(text);
    if (!form?.[1]) return hops;
    // The provider's login page (devInteractions: any login and password).
    const submit = new URL(form[1].replaceAll('&amp;', '&'), url).href;
    const answer = await send(jar, submit, {
      method: 'POST',
      body: new URLSearchParams({ prompt: 'login', login: opts.login, password: 'any-password' }),
    });
    const after = answer.headers.get('location');
    hops.push({ url: submit, status: answer.status, location: after });
    await answer.body?.cancel();
    if (!after) return hops;
    url = new URL(after, submit).href;
  }
  throw new Error(`sign-in did not settle within 20 hops: ${JSON.stringify(hops)}`);
}

/** The `Location` the dashboard's callback answered with (the destination after sign-in). */
export function callbackLocation(hops: Hop[]): string | null | undefined {
  return hops.find((h) => h.url.includes('/api/auth/callback/'))?.location;
}
