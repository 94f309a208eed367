import type { Context, Hono } from 'hono';
import { html } from 'hono/html';
import * as oidc from 'openid-client';
import { HttpError } from '../../http/index.ts';
import type { Logger } from '../../log/index.ts';
import type { DashboardEnv, Paths } from '../context.ts';
import type { OidcClient } from '../oidc/client.ts';
import type { TokenRefresher } from '../session/refresh.ts';
import type { Session, SessionStore, SessionUser } from '../session/store.ts';
import type { OidcSettings } from '../settings.ts';
import { plainPage } from '../ui/layout.ts';
import { CSP } from '../ui/routes.ts';
import { type CallbackPolicy, safeCallbackUrl } from './callback-url.ts';
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
    if (provider !== undefined && provider !== id)
      throw new HttpError(404, 'not_found', `no provider ${provider}`);
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
      throw new HttpError(404, 'not_found', `no provider ${c.req.param('provider')}`);
    const pending = await d.signins.take(c);
    if (!pending)
      throw new HttpError(
        400,
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
      throw new HttpError(
        400,
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
    return c.redirect(pending.callbackUrl, 302);
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

  app.get(at('/signout'), (c) => {
    c.header('content-security-policy', CSP);
    const token = d.csrf.issue(c);
    const requested = c.req.query('callbackUrl');
    const callbackUrl = requested ? safeCallbackUrl(requested, d.callbacks) : d.paths.to('/signout');
    return c.html(
      plainPage(
        'Sign out',
        d.paths,
        html`<p>Sign out of this dashboard?</p>
<form method="post" action="${at('/signout')}">
<input type="hidden" name="csrfToken" value="${token}">
<input type="hidden" name="callbackUrl" value="${callbackUrl}">
<button type="submit">Sign out</button>
</form>
<p><a href="${at('/federated-signout')}">Sign out of the provider too</a></p>`,
      ),
    );
  });

  app.post(at('/signout'), async (c) => {
    const form = await c.req.parseBody();
    if (!d.csrf.verify(c, typeof form.csrfToken === 'string' ? form.csrfToken : undefined))
      throw new HttpError(
        403,
        'csrf_token_invalid',
        'The sign-out form is stale or did not come from this dashboard.',
      );
    d.sessions.clear(c);
    const requested = typeof form.callbackUrl === 'string' ? form.callbackUrl : d.paths.to('/signout');
    return c.redirect(safeCallbackUrl(requested, d.callbacks), 302);
  });

  // Ends the dashboard session and, at once, the provider's (no page of its own).
  app.get(at('/federated-signout'), async (c) => {
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
    return c.redirect(target?.href ?? d.paths.to('/signout'), 302);
  });

  app.all(at('/*'), (c) => {
    throw new HttpError(404, 'not_found', `no auth route ${c.req.method} ${c.req.path}`);
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
