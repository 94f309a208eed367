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
 * its origin is this dashboard's or one of AUTH_ALLOWED_CALLBACK_ORIGINS; everything else —
 * protocol-relative `//evil`, backslash tricks, other schemes, other paths — falls back to the
 * dashboard's own root (the spec: "unlisted origins fall back to the hub's own BASE_URL").
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
  if (url.origin === own.origin) return underBasePath(url, policy.basePath) ? local(url) : home;
  if (policy.allowedOrigins.includes(url.origin)) return url.href;
  return home;
}

function underBasePath(url: URL, basePath: string): boolean {
  // Back into the auth routes would only loop (sign-in → sign-in).
  if (url.pathname.startsWith(`${basePath}/api/auth`)) return false;
  return basePath === '' || url.pathname === basePath || url.pathname.startsWith(`${basePath}/`);
}

function local(url: URL): string {
  return `${url.pathname}${url.search}${url.hash}`;
}
