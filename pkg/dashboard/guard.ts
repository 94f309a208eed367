import type { Context, MiddlewareHandler } from 'hono';
import { httpError } from '../http/index.ts';
import type { DashboardEnv, Paths } from './context.ts';
import type { TokenRefresher } from './session/refresh.ts';
import type { SessionStore } from './session/store.ts';

export const BASIC_CHALLENGE = 'Basic realm="berth", charset="UTF-8"';

/**
 * sso/hybrid: a request without a valid session never goes further — a page is redirected to
 * sign-in with its destination, an API call is answered 401 and never forwarded. A valid session
 * gets its tokens refreshed when due (a failed refresh is the same as no session) and its expiry
 * pushed out: the 30-minute TTL counts from the last use.
 */
export function sessionGuard(
  deps: { sessions: SessionStore; refresher: TokenRefresher },
  paths: Paths,
): MiddlewareHandler<DashboardEnv> {
  return async (c, next) => {
    const stored = await deps.sessions.read(c);
    if (!stored) return noSession(c, paths);
    const fresh = await deps.refresher.ensureFresh(stored.session);
    if (fresh.kind === 'failed') {
      deps.sessions.clear(c);
      return noSession(c, paths);
    }
    await deps.sessions.slide(c, { ...stored, session: fresh.session }, fresh.kind === 'refreshed');
    c.set('dashboardUser', fresh.session.user);
    c.set('upstreamAuthorization', `Bearer ${fresh.session.accessToken}`);
    return next();
  };
}

/**
 * basic: every request needs HTTP Basic credentials (an API key pair), which are forwarded to the
 * API as they are. The API verifies them; the dashboard serves nothing but its own pages without it.
 */
export function basicGuard(): MiddlewareHandler<DashboardEnv> {
  return async (c, next) => {
    const header = c.req.header('authorization');
    if (!header || !/^Basic\s+\S+$/i.test(header))
      throw httpError('unauthorized', 'HTTP Basic credentials (an API key pair) are required', undefined, {
        headers: { 'www-authenticate': BASIC_CHALLENGE },
      });
    c.set('upstreamAuthorization', header);
    return next();
  };
}

/** 401 `unauthorized` for an API call (the API service's code for the same fault); a page signs in. */
function noSession(c: Context<DashboardEnv>, paths: Paths): Response {
  if (paths.isApi(c.req.path))
    throw httpError('unauthorized', `no valid session: sign in at ${paths.auth}/signin`);
  const url = new URL(c.req.url);
  return c.redirect(paths.signinFor(`${url.pathname}${url.search}`), 302);
}
