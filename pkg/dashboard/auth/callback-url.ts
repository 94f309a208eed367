export interface CallbackPolicy {
  /** BASE_URL: its origin is this dashboard's own. */
  baseUrl: string;
  basePath: string;
  /** AUTH_ALLOWED_CALLBACK_ORIGINS: other dashboards a login hub may send users back to. */
  allowedOrigins: readonly string[];
}

/**
 * Where to send the user after sign-in or sign-out, from a caller-supplied `callbackUrl`. Never an
 * open redirect: a same-origin path under the base path is kept; an absolute URL is kept only when
 * its origin is one of AUTH_ALLOWED_CALLBACK_ORIGINS; everything else falls back to the dashboard's
 * own root (the spec: "unlisted origins fall back to the hub's own BASE_URL").
 *
 * The decision is made on the OUTPUT: whatever the input was (`/.//evil.com`, `/a/..//evil.com`,
 * `/%2e//evil.com`, `https://<own origin>//evil.com` all normalise to the path `//evil.com`), the
 * local answer must read back as a path of this origin under the base path (`isSafeLocalPath`).
 */
export function safeCallbackUrl(raw: string | undefined, policy: CallbackPolicy): string {
  const home = `${policy.basePath}/`;
  if (!raw) return home;
  // Browsers treat `\` like `/` and drop tabs and newlines: `/\evil.com` or `/\t/evil.com` would
  // become protocol-relative, so anything of the kind is refused outright.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\\\u0000-\u001f\u007f]/.test(raw)) return home;
  const own = new URL(policy.baseUrl);
  let url: URL;
  try {
    url = raw.startsWith('/') ? new URL(raw, own.origin) : new URL(raw);
  } catch {
    return home;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return home;
  if (raw.startsWith('//')) return home;
  if (url.origin === own.origin) {
    // `/team-a` is the tenant's home without its slash: answer `/team-a/` (base path, one `/`).
    if (policy.basePath && url.pathname === policy.basePath) url.pathname = `${policy.basePath}/`;
    const path = `${url.pathname}${url.search}${url.hash}`;
    return underBasePath(url, policy.basePath) && isSafeLocalPath(path, policy) ? path : home;
  }
  if (policy.allowedOrigins.includes(url.origin)) return url.href;
  return home;
}

/**
 * Whether `location`, sent as a `Location` header, stays on this dashboard: it starts with the base
 * path and then exactly one `/` followed by neither `/` nor `\` (so no reader can take it for a
 * protocol-relative `//host`), contains nothing a browser strips or rewrites, and resolves against
 * the dashboard's origin to that origin with the same path, query and fragment.
 */
export function isSafeLocalPath(
  location: string,
  policy: Pick<CallbackPolicy, 'baseUrl' | 'basePath'>,
): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\\\s\u0000-\u001f\u007f]/.test(location)) return false;
  const base = policy.basePath;
  if (!location.startsWith(`${base}/`) || /^[/\\]/.test(location.slice(base.length + 1))) return false;
  if (!location.startsWith('/') || /^\/[/\\]/.test(location)) return false;
  const origin = new URL(policy.baseUrl).origin;
  let url: URL;
  try {
    url = new URL(location, origin);
  } catch {
    return false;
  }
  return url.origin === origin && `${url.pathname}${url.search}${url.hash}` === location;
}

/**
 * The last check before a redirect to a stored destination (the sealed sign-in cookie holds one):
 * a local path must pass `isSafeLocalPath`, an absolute URL must be of an allowed origin.
 */
export function finalLocation(destination: string, policy: CallbackPolicy): string {
  const home = `${policy.basePath}/`;
  if (destination.startsWith('/')) return isSafeLocalPath(destination, policy) ? destination : home;
  try {
    const url = new URL(destination);
    return policy.allowedOrigins.includes(url.origin) ? url.href : home;
  } catch {
    return home;
  }
}

function underBasePath(url: URL, basePath: string): boolean {
  // Back into the auth routes would only loop (sign-in → sign-in).
  if (url.pathname.startsWith(`${basePath}/api/auth`)) return false;
  return basePath === '' || url.pathname === basePath || url.pathname.startsWith(`${basePath}/`);
}
