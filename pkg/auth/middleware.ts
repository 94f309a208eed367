import type { Context, MiddlewareHandler } from 'hono';
import { loggedText } from '../http/access-log/index.ts';
import { httpError } from '../http/index.ts';
import type { Logger } from '../log/index.ts';
import type { ApiKeyVerifier } from './api-keys/types.ts';
import { readCredential } from './credentials.ts';
import { JwtError, type JwtVerifier } from './jwt.ts';
import { type AuthMode, acceptsApiKeys, acceptsJwt } from './mode.ts';
import { ANONYMOUS, type Principal, type PrincipalVariables } from './principal.ts';

export const DEFAULT_PUBLIC_PATHS = ['/health', '/docs', '/docs/*', '/openapi.json'];

/** What `authMiddleware` sets on its app's context. */
export type AuthVariables = PrincipalVariables & {
  /** Why authentication refused the request: a short fixed word, the metrics' `reason` label. */
  authFailure: string;
};
type AuthEnv = { Variables: AuthVariables };

export interface AuthMiddlewareOptions {
  mode: AuthMode;
  /** Required in basic and hybrid. */
  apiKeys?: ApiKeyVerifier;
  /** Required in sso and hybrid. */
  jwt?: JwtVerifier;
  /** Paths served without credentials: exact, or a prefix ending in `/*`. */
  publicPaths?: string[];
  realm?: string;
  logger?: Logger;
}

/**
 * The API service's authentication, per AUTH_MODE. Sets `c.get('principal')` for the routes.
 * A refusal is thrown (401 `unauthorized`, 403, 429): the app's `onError` (pkg/http's
 * `errorHandler`) renders it, with the challenges set here.
 * Client-supplied `Impersonate-*` headers are refused in every mode: identities reach Kubernetes
 * only through what this middleware established, never through what the client claims.
 */
export function authMiddleware(opts: AuthMiddlewareOptions): MiddlewareHandler<AuthEnv> {
  const { mode, apiKeys, jwt, logger } = opts;
  if (acceptsApiKeys(mode) && !apiKeys) throw new Error(`AUTH_MODE=${mode} needs the API key service`);
  if (acceptsJwt(mode) && !jwt) throw new Error(`AUTH_MODE=${mode} needs a JWT verifier (OIDC_ISSUER_URL)`);
  const isPublic = publicMatcher(opts.publicPaths ?? DEFAULT_PUBLIC_PATHS);
  const realm = (opts.realm ?? 'berth').replace(/"/g, '');
  const basicChallenge = `Basic realm="${realm}", charset="UTF-8"`;
  const bearerChallenge = (error?: string, description?: string) =>
    `Bearer realm="${realm}"` +
    (error ? `, error="${error}", error_description="${(description ?? '').replace(/["\\]/g, '')}"` : '');

  // Thrown, for the app's error handler to render; the challenges (one per scheme) are set here.
  const unauthorized = (c: Context<AuthEnv>, reason: string, message: string, bearerError?: string) => {
    c.set('authFailure', reason);
    if (acceptsApiKeys(mode)) c.header('WWW-Authenticate', basicChallenge, { append: true });
    if (acceptsJwt(mode))
      c.header('WWW-Authenticate', bearerChallenge(bearerError, message), { append: true });
    return httpError('unauthorized', message);
  };

  return async (c, next) => {
    const impersonation = impersonationHeader(c.req.raw.headers);
    if (impersonation) {
      logger?.warn(
        { header: loggedText(impersonation), path: loggedText(c.req.path) },
        'refused client-supplied impersonation header',
      );
      c.set('authFailure', 'impersonation_header');
      throw httpError(
        'impersonation_forbidden',
        `the ${impersonation} header is not accepted: the API service decides whom it acts as`,
      );
    }
    if (mode === 'open' || isPublic(c.req.path)) {
      c.set('principal', ANONYMOUS);
      return next();
    }
    const cred = readCredential(c.req.header('authorization'), c.req.header('x-api-key'));
    let principal: Principal;
    switch (cred.kind) {
      case 'none':
        throw unauthorized(c, 'missing_credentials', missingMessage(mode));
      case 'malformed':
        throw unauthorized(
          c,
          'malformed_credentials',
          cred.message,
          cred.scheme === 'bearer' ? 'invalid_token' : undefined,
        );
      case 'api-key': {
        if (!acceptsApiKeys(mode) || !apiKeys)
          throw unauthorized(
            c,
            'api_key_not_accepted',
            `API keys are not accepted in ${mode} mode; send a bearer JWT`,
          );
        const result = await apiKeys.verify(cred.publicKey, cred.secretKey);
        if (!result.ok && result.reason === 'rate_limited') {
          // Answered without bcrypt: the bound on wrong secrets (api-keys/bcrypt-gate.ts).
          logger?.debug({ publicKey: cred.publicKey, scope: result.scope }, 'API key attempt limited');
          c.set('authFailure', 'api_key_rate_limited');
          throw httpError(
            'rate_limited',
            result.scope === 'key'
              ? `too many failed attempts with this API key; retry in ${result.retryAfterSec} s`
              : `too many API key verifications at once; retry in ${result.retryAfterSec} s`,
            undefined,
            { headers: { 'retry-after': String(result.retryAfterSec) } },
          );
        }
        if (!result.ok) {
          logger?.info(
            { publicKey: cred.publicKey, reason: result.reason, form: cred.form },
            'API key refused',
          );
          throw unauthorized(c, `api_key_${result.reason}`, 'invalid, revoked or expired API key');
        }
        principal = {
          kind: 'api-key',
          name: result.record.publicKey,
          publicKey: result.record.publicKey,
          keyName: result.record.name,
          ...(result.record.actsAs ? { actsAs: result.record.actsAs } : {}),
        };
        break;
      }
      case 'jwt': {
        if (!acceptsJwt(mode) || !jwt)
          throw unauthorized(
            c,
            'jwt_not_accepted',
            `bearer JWTs are not accepted in ${mode} mode; use an API key`,
          );
        try {
          principal = await jwt.verify(cred.token);
        } catch (err) {
          // A token this service cannot verify is not a valid token: 401, as the spec says for sso.
          // The outage is the operators' to see, so it is logged as an error.
          if (err instanceof JwtError && err.unavailable) {
            logger?.error({ err }, 'cannot verify bearer token: issuer unavailable');
            throw unauthorized(
              c,
              'issuer_unavailable',
              'bearer token could not be verified: the OIDC issuer cannot be reached',
              'invalid_token',
            );
          }
          const message = err instanceof JwtError ? err.message : 'invalid token';
          logger?.info({ reason: message, code: (err as JwtError).code }, 'bearer token refused');
          throw unauthorized(c, 'invalid_token', `invalid bearer token: ${message}`, 'invalid_token');
        }
        break;
      }
    }
    c.set('principal', principal);
    return next();
  };
}

function missingMessage(mode: AuthMode): string {
  if (mode === 'basic') return 'credentials required: HTTP Basic, X-API-Key or Bearer with an API key';
  if (mode === 'sso') return 'credentials required: Authorization: Bearer <JWT access token>';
  return 'credentials required: an API key (HTTP Basic, X-API-Key, Bearer pk:sk) or a bearer JWT';
}

function impersonationHeader(headers: Headers): string | undefined {
  for (const name of headers.keys()) if (name.startsWith('impersonate-')) return name;
  return undefined;
}

function publicMatcher(paths: string[]): (path: string) => boolean {
  const exact = new Set(paths.filter((p) => !p.endsWith('/*')));
  const prefixes = paths.filter((p) => p.endsWith('/*')).map((p) => p.slice(0, -1));
  return (path) => exact.has(path) || prefixes.some((p) => path.startsWith(p));
}
