import * as oidc from 'openid-client';
import { HttpError } from '../../http/index.ts';
import type { Logger } from '../../log/index.ts';
import type { OidcSettings } from '../settings.ts';

/** The spec's required scopes. */
export const SCOPES = 'openid profile email';

export interface TokenResult {
  accessToken: string;
  refreshToken?: string;
  idToken?: string;
  /** Seconds until the access token expires, when the provider said. */
  expiresIn?: number;
  /** The ID token's claims (present after the code exchange). */
  claims?: Record<string, unknown>;
}

export interface AuthorizationChecks {
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** The provider could not be reached or answered with a server error: retry later, not a sign-in. */
export class ProviderUnavailable extends HttpError {
  constructor(what: string, cause: unknown) {
    super('provider_unavailable', `the OpenID provider cannot be reached (${what}): ${reason(cause)}`);
  }
}

function reason(err: unknown): string {
  const e = err as { message?: string; code?: string; cause?: { code?: string; message?: string } };
  return e.cause?.code ?? e.code ?? e.cause?.message ?? e.message ?? String(err);
}

/** A network failure, a timeout or a 5xx from the provider, as openid-client reports them. */
export function isUnavailable(err: unknown): boolean {
  if (err instanceof TypeError) return true; // fetch failed: refused, reset, DNS
  if (err instanceof oidc.ClientError)
    return (
      err.code === 'OAUTH_TIMEOUT' ||
      err.code === 'OAUTH_ABORT' ||
      (err.code === 'OAUTH_RESPONSE_IS_NOT_CONFORM' && ((err.cause as Response)?.status ?? 500) >= 500)
    );
  return false;
}

/**
 * The dashboard's relying party: authorization code flow with PKCE, state and nonce through
 * openid-client. Discovery happens on first use and is retried after a failure, so the dashboard
 * starts (and serves `/signout`, health, assets) while the provider is still coming up.
 */
export class OidcClient {
  readonly redirectUri: string;
  readonly #settings: OidcSettings;
  readonly #logger: Logger;
  #config: Promise<oidc.Configuration> | undefined;

  constructor(settings: OidcSettings, redirectUri: string, logger: Logger) {
    this.#settings = settings;
    this.redirectUri = redirectUri;
    this.#logger = logger;
  }

  config(): Promise<oidc.Configuration> {
    if (!this.#config) {
      const s = this.#settings;
      const insecure = s.issuer.startsWith('http:');
      this.#config = oidc
        .discovery(
          new URL(s.issuer),
          s.clientId,
          s.clientSecret,
          s.clientSecret ? oidc.ClientSecretBasic(s.clientSecret) : oidc.None(),
          { timeout: 10, ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}) },
        )
        .then((config) => {
          this.#logger.info(
            { issuer: s.issuer, endSession: !!config.serverMetadata().end_session_endpoint },
            'OpenID provider discovered',
          );
          if (insecure)
            this.#logger.warn({ issuer: s.issuer }, 'the OpenID provider is reached over plain http');
          return config;
        });
      // A failed discovery is not kept: the next request tries again.
      this.#config.catch((err: unknown) => {
        this.#config = undefined;
        this.#logger.warn({ err: reason(err), issuer: s.issuer }, 'OpenID provider discovery failed');
      });
    }
    return this.#config.catch((err: unknown) => {
      throw new ProviderUnavailable('discovery', err);
    });
  }

  async authorizationUrl(checks: AuthorizationChecks): Promise<URL> {
    const config = await this.config();
    return oidc.buildAuthorizationUrl(config, {
      redirect_uri: this.redirectUri,
      scope: SCOPES,
      response_type: 'code',
      state: checks.state,
      nonce: checks.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(checks.codeVerifier),
      code_challenge_method: 'S256',
    });
  }

  /**
   * Validates the authorization response (state, issuer) and redeems the code with the PKCE
   * verifier; the ID token's nonce, audience, issuer and signature are checked by openid-client.
   * `callbackUrl` must be the registered redirect URI with the response's query.
   */
  async exchange(callbackUrl: URL, checks: AuthorizationChecks): Promise<TokenResult> {
    const config = await this.config();
    const tokens = await oidc
      .authorizationCodeGrant(config, callbackUrl, {
        expectedState: checks.state,
        expectedNonce: checks.nonce,
        pkceCodeVerifier: checks.codeVerifier,
        idTokenExpected: true,
      })
      .catch(this.#unavailable('token'));
    return { ...toResult(tokens), claims: tokens.claims() as Record<string, unknown> | undefined };
  }

  async refresh(refreshToken: string): Promise<TokenResult> {
    const config = await this.config();
    const tokens = await oidc.refreshTokenGrant(config, refreshToken).catch(this.#unavailable('refresh'));
    return toResult(tokens);
  }

  /** The provider's end-session URL for this user, or undefined when it has none. */
  async endSessionUrl(params: {
    idTokenHint?: string;
    postLogoutRedirectUri: string;
  }): Promise<URL | undefined> {
    const config = await this.config();
    if (!config.serverMetadata().end_session_endpoint) return undefined;
    return oidc.buildEndSessionUrl(config, {
      post_logout_redirect_uri: params.postLogoutRedirectUri,
      client_id: this.#settings.clientId,
      ...(params.idTokenHint ? { id_token_hint: params.idTokenHint } : {}),
    });
  }

  #unavailable(what: string) {
    return (err: unknown): never => {
      throw isUnavailable(err) ? new ProviderUnavailable(what, err) : err;
    };
  }
}

function toResult(tokens: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers): TokenResult {
  return {
    accessToken: tokens.access_token,
    ...(tokens.refresh_token ? { refreshToken: tokens.refresh_token } : {}),
    ...(tokens.id_token ? { idToken: tokens.id_token } : {}),
    ...(tokens.expiresIn() !== undefined ? { expiresIn: tokens.expiresIn() } : {}),
  };
}
