import type { Context, Hono } from 'hono';
import { html } from 'hono/html';
import * as oidc from 'openid-client';
import { HttpError, httpError } from '../../http/index.ts';
import type { Logger } from '../../log/index.ts';
import type { DashboardEnv, Paths } from '../context.ts';
import type { OidcClient } from '../oidc/client.ts';
import type { TokenRefresher } from '../session/refresh.ts';
import type { Session, SessionStore, SessionUser } from '../session/store.ts';
import type { OidcSettings } from '../settings.ts';
import { plainPage } from '../ui/layout.ts';
import { CSP } from '../ui/routes.ts';
import { type CallbackPolicy, finalLocation, safeCallbackUrl } from './callback-url.ts';
import type { CsrfTokens } from './csrf.ts';
import type { PendingSignins } from './pending.ts';

export interface AuthRouteDeps {
  settings: OidcSettings;
  baseUrl: string;
  paths: Paths;
  callbacks: CallbackPolicy;
  oidc: OidcClient;
  sessions: SessionStore;
  signins: PendingSignins;
  csrf: CsrfTokens;
  refresher: TokenRefresher;
  nowSec: () => number;
  logger: Logger;
}

/**
 * The NextAuth-shaped catch-all of the spec under `<base>/api/auth`: signin, callback/<provider>,
 * session, providers, csrf, signout, and federated-signout. Public (the guard does not cover them).
 */
export function mountAuthRoutes(app: Hono<DashboardEnv>, d: AuthRouteDeps): void {
  const at = (path: string) => `${d.paths.auth}${path}`;
  const id = d.settings.providerId;

  const signin = async (c: Context<DashboardEnv>) => {
    const form = c.req.method === 'POST' ? await c.req.parseBody() : {};
    const requested =
      c.req.query('callbackUrl') ?? (typeof form.callbackUrl === 'string' ? form.callbackUrl : '');
    const provider = c.req.param('provider');
    if (provider !== undefined && provider !== id) throw httpError('not_found', `no provider ${provider}`);
    const checks = {
      state: oidc.randomState(),
      nonce: oidc.randomNonce(),
      codeVerifier: oidc.randomPKCECodeVerifier(),
    };
    const target = await d.oidc.authorizationUrl(checks);
    await d.signins.start(c, { ...checks, callbackUrl: safeCallbackUrl(requested, d.callbacks) });
    d.logger.debug({ provider: id }, 'sign-in started');
    return c.redirect(target.href, 302);
  };
  app.on(['GET', 'POST'], [at('/signin'), at('/signin/:provider')], signin);

  app.get(at('/callback/:provider'), async (c) => {
    if (c.req.param('provider') !== id)
      throw httpError('not_found', `no provider ${c.req.param('provider')}`);
    const pending = await d.signins.take(c);
    if (!pending)
      throw httpError(
        'signin_state_missing',
        'No sign-in is in progress in this browser: it expired, was already completed, or this callback was replayed.',
      );
    const query = new URL(c.req.url).search;
    const current = new URL(d.oidc.redirectUri);
    current.search = query;
    let tokens: Awaited<ReturnType<OidcClient['exchange']>>;
    try {
      tokens = await d.oidc.exchange(current, pending);
    } catch (err) {
      if (err instanceof HttpError) throw err;
      const e = err as { error?: string; code?: string; message?: string };
      d.logger.info({ reason: e.error ?? e.code ?? e.message }, 'sign-in callback refused');
      throw httpError(
        'signin_failed',
        `The sign-in could not be completed (${e.error ?? e.code ?? 'invalid response'}).`,
      );
    }
    const now = d.nowSec();
    const session: Session = {
      user: userOf(tokens.claims ?? {}),
      accessToken: tokens.accessToken,
      ...(tokens.refreshToken ? { refreshToken: tokens.refreshToken } : {}),
      ...(tokens.idToken ? { idToken: tokens.idToken } : {}),
      ...(tokens.expiresIn !== undefined ? { accessTokenExpiresAt: now + tokens.expiresIn } : {}),
      tokensAt: now,
    };
    await d.sessions.write(c, session);
    d.logger.info({ sub: session.user.sub, name: session.user.name }, 'signed in');
    // Checked again on the way out: whatever the cookie held, the Location stays on this dashboard.
    return c.redirect(finalLocation(pending.callbackUrl, d.callbacks), 302);
  });

  // `?refresh=focus` (the window regained focus: user activity) refreshes tokens older than a minute
  // and slides the session; `?refresh=interval` (the page's 10-minute timer) refreshes when due but
  // keeps the expiry, so an idle open tab still signs out after 30 minutes.
  app.on(['GET', 'POST'], at('/session'), async (c) => {
    c.header('cache-control', 'no-store');
    const stored = await d.sessions.read(c);
    if (!stored) return c.json({});
    const reason = c.req.method === 'POST' ? 'focus' : c.req.query('refresh');
    const fresh = await d.refresher.ensureFresh(stored.session, reason === 'focus');
    if (fresh.kind === 'failed') {
      d.sessions.clear(c);
      return c.json({});
    }
    const changed = fresh.kind === 'refreshed';
    const expires =
      reason === 'interval'
        ? changed
          ? await d.sessions.write(c, fresh.session, stored.expiresAt)
          : stored.expiresAt
        : await d.sessions.slide(c, { ...stored, session: fresh.session }, changed);
    return c.json({ user: fresh.session.user, expires: new Date(expires * 1000).toISOString() });
  });

  app.get(at('/providers'), (c) =>
    c.json({
      [id]: {
        id,
        name: d.settings.providerName,
        type: 'oidc',
        signinUrl: `${d.baseUrl}/api/auth/signin/${id}`,
        callbackUrl: d.oidc.redirectUri,
      },
    }),
  );

  app.get(at('/csrf'), (c) => {
    c.header('cache-control', 'no-store');
    return c.json({ csrfToken: d.csrf.issue(c) });
  });

  // Signing out changes state, so it is a POST carrying the CSRF token (double-submit, csrf.ts):
  // a GET — a link, an image, a top-level navigation another site starts — signs no one out.
  const postOnly = () => {
    throw httpError(
      'method_not_allowed',
      'Signing out is a POST with the csrfToken of GET /api/auth/csrf (the Sign out button sends it).',
      undefined,
      { headers: { allow: 'POST' } },
    );
  };
  app.get(at('/signout'), postOnly);
  app.get(at('/federated-signout'), postOnly);

  const checkCsrf = async (c: Context<DashboardEnv>) => {
    const form = await c.req.parseBody();
    if (!d.csrf.verify(c, typeof form.csrfToken === 'string' ? form.csrfToken : undefined))
      throw httpError(
        'csrf_token_invalid',
        'The sign-out form is stale or did not come from this dashboard.',
      );
    return form;
  };

  // Ends the dashboard session only.
  app.post(at('/signout'), async (c) => {
    const form = await checkCsrf(c);
    d.sessions.clear(c);
    const requested = typeof form.callbackUrl === 'string' ? form.callbackUrl : d.paths.to('/signout');
    return c.redirect(safeCallbackUrl(requested, d.callbacks), 302);
  });

  // Ends the dashboard session and, at once, the provider's.
  app.post(at('/federated-signout'), async (c) => {
    await checkCsrf(c);
    const stored = await d.sessions.read(c);
    d.sessions.clear(c);
    const landing = `${d.baseUrl}/signout`;
    let target: URL | undefined;
    try {
      target = await d.oidc.endSessionUrl({
        idTokenHint: stored?.session.idToken,
        postLogoutRedirectUri: landing,
      });
    } catch (err) {
      d.logger.warn(
        { reason: (err as Error).message },
        'federated sign-out: provider unavailable; local sign-out only',
      );
    }
    if (!target) d.logger.warn('the provider has no end_session_endpoint: its session stays active');
    const next = target?.href ?? d.paths.to('/signout');
    return navigating(c) ? continuePage(c, d.paths, next) : c.redirect(next, 303);
  });

  app.all(at('/*'), (c) => {
    throw httpError('not_found', `no auth route ${c.req.method} ${c.req.path}`);
  });
}

/** The user as the ID token describes them: what the session shows, never the tokens. */
function userOf(claims: Record<string, unknown>): SessionUser {
  const str = (k: string) => (typeof claims[k] === 'string' ? (claims[k] as string) : undefined);
  const groups = Array.isArray(claims.groups) ? claims.groups.filter((g) => typeof g === 'string') : [];
  const name = str('name') ?? str('preferred_username') ?? str('email');
  const email = str('email');
  return {
    sub: str('sub') ?? 'unknown',
    ...(name ? { name } : {}),
    ...(email ? { email } : {}),
    ...(groups.length ? { groups } : {}),
  };
}

const navigating = (c: Context) => (c.req.header('accept') ?? '').includes('text/html');

/**
 * The way on to the provider after the sign-out form: a page that moves on by itself (meta
 * refresh, no script) rather than a redirect, because the CSP's `form-action 'self'` rightly
 * forbids a form submission to end up at another origin. It holds the ID token hint: never cached.
 */
function continuePage(c: Context<DashboardEnv>, paths: Paths, next: string): Response | Promise<Response> {
  c.header('content-security-policy', CSP);
  c.header('cache-control', 'no-store');
  return c.html(
    plainPage(
      'Signing out',
      paths,
      html`<meta http-equiv="refresh" content="0; url=${next}">
<p>You are signed out of Berth. Signing you out of the provider…</p>
<p><a id="continue-sign-out" href="${next}">Continue</a></p>`,
    ),
  );
}
