import type { Context, Hono } from 'hono';
import { html } from 'hono/html';
import type { AuthMode } from '../../auth/mode.ts';
import { httpError } from '../../http/index.ts';
import type { DashboardEnv, Paths } from '../context.ts';
import type { Assets } from './assets.ts';
import { page, plainPage } from './layout.ts';
import { sectionOf } from './screens.ts';

/**
 * Strict by default: scripts, styles and requests only to this origin, no framing. Pages have no
 * inline script, so a token could never be read by an injected one either (the cookie is HTTP-only).
 */
export const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'";

/** Public routes: static assets, the favicon and the post-logout landing page. */
export function mountPublicUi(app: Hono<DashboardEnv>, paths: Paths, assets: Assets): void {
  app.get(paths.to('/static/*'), (c) => {
    const res = assets.serve(c, c.req.path.slice(paths.to('/static/').length));
    if (!res) throw httpError('not_found', `no asset ${c.req.path}`);
    return res;
  });
  app.get(paths.to('/favicon.ico'), (c) => assets.serve(c, 'favicon.svg') ?? c.body(null, 404));
  // The provider sends the user here after a federated sign-out (post_logout_redirect_uri).
  app.get(paths.to('/signout'), (c) => {
    c.header('content-security-policy', CSP);
    return c.html(
      plainPage(
        'Signed out',
        paths,
        html`<p>You are signed out of Berth.</p><p><a id="sign-in-again" href="${paths.home}">Sign in again</a></p>`,
      ),
    );
  });
}

/** A section name, and the rest of a detail path (an object name, a trace id, `new`). */
const SECTION = ':section{[a-z][a-z-]{0,30}}';
const REST = ':rest{[^/]{1,253}}';

/**
 * The UI shell for the home page, every section (`/queries`) and its detail and create views
 * (`/queries/hello`, `/agents/new`), behind the guard: the browser-side app routes within it.
 * Anything else under the base path is not a page (404). `csrfToken` issues this browser's token
 * (sso/hybrid), which the sign-out form in the header posts.
 */
export function mountScreens(
  app: Hono<DashboardEnv>,
  paths: Paths,
  mode: AuthMode,
  csrfToken?: (c: Context<DashboardEnv>) => string,
): void {
  const shell = (c: Context<DashboardEnv>) => {
    const section = sectionOf(c.req.path.slice(paths.base.length));
    if (c.req.path !== paths.home && !section) throw httpError('not_found', `no page ${c.req.path}`);
    c.header('content-security-policy', CSP);
    c.header('cache-control', 'no-store');
    return c.html(
      page({
        title: section?.title ?? 'Berth',
        paths,
        mode,
        user: c.get('dashboardUser'),
        current: section?.path,
        self: c.req.path,
        csrfToken: c.get('dashboardUser') ? csrfToken?.(c) : undefined,
      }),
    );
  };
  app.get(paths.home, shell);
  app.get(paths.to(`/${SECTION}`), shell);
  app.get(paths.to(`/${SECTION}/${REST}`), shell);
}
