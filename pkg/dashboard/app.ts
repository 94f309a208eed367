import { type Context, type Env, Hono, type MiddlewareHandler } from 'hono';
import { html } from 'hono/html';
import { acceptsJwt } from '../auth/mode.ts';
import {
  accessLog,
  type ErrorRenderer,
  errorHandler,
  type HttpError,
  httpError,
  notFoundHandler,
  renderEnvelope,
  requestId,
} from '../http/index.ts';
import type { Logger } from '../log/index.ts';
import { CsrfTokens } from './auth/csrf.ts';
import { PendingSignins } from './auth/pending.ts';
import { mountAuthRoutes } from './auth/routes.ts';
import { type DashboardEnv, Paths } from './context.ts';
import { basicGuard, sessionGuard } from './guard.ts';
import { OidcClient } from './oidc/client.ts';
import { apiProxy } from './proxy.ts';
import { TokenRefresher } from './session/refresh.ts';
import { SessionStore } from './session/store.ts';
import type { DashboardSettings } from './settings.ts';
import { Assets } from './ui/assets.ts';
import { plainPage, setBundle } from './ui/layout.ts';
import { CSP, mountPublicUi, mountScreens } from './ui/routes.ts';

/** The spec: a session expires after 30 minutes of inactivity. */
export const SESSION_TTL_SEC = 30 * 60;

export interface DashboardAppOptions {
  settings: DashboardSettings;
  logger: Logger;
  /** The clock (epoch milliseconds); tests move it to expire sessions and age tokens without waiting. */
  now?: () => number;
  sessionTtlSec?: number;
  assets?: Assets;
}

/**
 * The dashboard's server: public routes (health, assets, `/signout`, `/api/auth/*`), then the
 * guard of AUTH_MODE, then the `/api/*` proxy and the screens — all under the base path.
 */
export function createDashboardApp(opts: DashboardAppOptions): Hono<DashboardEnv> {
  const { settings: s, logger } = opts;
  const paths = new Paths(s.basePath);
  const nowSec = () => Math.floor((opts.now ?? Date.now)() / 1000);
  const app = new Hono<DashboardEnv>();
  app.use('*', requestId());
  app.use('*', securityHeaders());
  // Never headers: they carry the session cookie.
  app.use('*', accessLog<DashboardEnv>(logger, { who: (c) => ({ user: c.get('dashboardUser')?.sub }) }));
  app.onError(errorHandler(logger, { render: renderFor(paths) }));
  app.notFound(notFoundHandler);

  app.get('/health', (c) => c.json({ status: 'ok' }));
  // The ingress routes `/<namespace>/…`; the bare prefix gets the trailing slash relative URLs need.
  if (paths.base) app.get(paths.base, (c) => c.redirect(paths.home, 308));
  const assets = opts.assets ?? new Assets();
  setBundle(assets.bundle());
  mountPublicUi(app, paths, assets);

  let guard: MiddlewareHandler<DashboardEnv> | undefined;
  let csrf: CsrfTokens | undefined;
  if (acceptsJwt(s.mode)) {
    if (!s.oidc || !s.authSecret || !s.baseUrl)
      throw new Error(`AUTH_MODE=${s.mode} needs the OIDC settings`);
    const cookieScope = { secret: s.authSecret, secure: s.secureCookies, nowSec };
    const sessions = new SessionStore({
      ...cookieScope,
      path: paths.base || '/',
      ttlSec: opts.sessionTtlSec ?? SESSION_TTL_SEC,
    });
    const client = new OidcClient(s.oidc, `${s.authUrl}/callback/${s.oidc.providerId}`, logger);
    const refresher = new TokenRefresher({ refresh: (rt) => client.refresh(rt), nowSec, logger });
    csrf = new CsrfTokens(s.authSecret, { secure: s.secureCookies, path: paths.base || '/' });
    mountAuthRoutes(app, {
      settings: s.oidc,
      baseUrl: s.baseUrl,
      paths,
      callbacks: { baseUrl: s.baseUrl, basePath: s.basePath, allowedOrigins: s.allowedCallbackOrigins },
      oidc: client,
      sessions,
      signins: new PendingSignins({ ...cookieScope, path: paths.auth }),
      csrf,
      refresher,
      nowSec,
      logger,
    });
    guard = sessionGuard({ sessions, refresher }, paths);
  } else {
    app.all(`${paths.auth}/*`, () => {
      throw httpError('not_found', `dashboard sign-in is disabled in AUTH_MODE=${s.mode}`);
    });
    if (s.mode === 'basic') guard = basicGuard();
  }
  if (guard) app.use(paths.to('/*'), guard);

  const proxy = apiProxy({
    apiServiceUrl: s.apiServiceUrl,
    paths,
    logger,
    dropChallenges: acceptsJwt(s.mode),
  });
  app.all(paths.api, proxy);
  app.all(`${paths.api}/*`, proxy);
  const tokens = csrf;
  mountScreens(app, paths, s.mode, tokens ? (c) => tokens.issue(c) : undefined);
  return app;
}

function securityHeaders(): MiddlewareHandler<Env> {
  return async (c, next) => {
    await next();
    c.header('x-content-type-options', 'nosniff');
    c.header('referrer-policy', 'same-origin');
    c.header('x-frame-options', 'DENY');
  };
}

/**
 * Errors as the envelope for API calls and scripts; as a page for a browser navigating (a failed
 * sign-in callback, a stale form), with the way back to sign-in.
 */
function renderFor(paths: Paths): ErrorRenderer {
  return (c: Context, err: HttpError) => {
    const accept = c.req.header('accept') ?? '';
    const navigating = c.req.method !== 'HEAD' && accept.includes('text/html');
    const apiCall = paths.isApi(c.req.path) && !c.req.path.startsWith(`${paths.auth}/`);
    if (!navigating || apiCall) return renderEnvelope(c, err);
    const body = plainPage(
      err.status === 401 ? 'Sign-in required' : 'Something went wrong',
      paths,
      html`<p id="error-message">${err.message}</p><p class="muted">${err.code}</p>
<p><a href="${paths.home}">Back to Berth</a></p>`,
    );
    // The templates hold no promises, so the page is a string already (the renderer is synchronous);
    // through the context, so headers set before (a Basic challenge, the request id) go out with it.
    return c.newResponse(String(body), {
      status: err.status,
      headers: { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': CSP },
    });
  };
}
