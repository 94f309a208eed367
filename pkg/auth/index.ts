import type { KubeConfig } from '@kubernetes/client-node';
import type { MiddlewareHandler } from 'hono';
import type { InformerCache } from '../kube/cache.ts';
import { createClient } from '../kube/client/index.ts';
import type { Client } from '../kube/client/types.ts';
import { Scheme } from '../kube/kinds.ts';
import type { Logger } from '../log/index.ts';
import { secretSourceFrom, startApiKeyCache } from './api-keys/secret-cache.ts';
import { ApiKeyService } from './api-keys/service.ts';
import { claimMappingFrom } from './identity.ts';
import {
  accessTokenTypeFrom,
  clockToleranceFrom,
  createJwtVerifier,
  type JwtVerifier,
  parseAudiences,
} from './jwt.ts';
import { authMiddleware } from './middleware.ts';
import { type AuthMode, acceptsJwt, resolveAuthMode } from './mode.ts';

export { apiKeyRoutes } from './api-keys/routes.ts';
export { type SecretSource, secretSourceFrom, startApiKeyCache } from './api-keys/secret-cache.ts';
export { ApiKeyService } from './api-keys/service.ts';
export type {
  ApiKeyFailure,
  ApiKeyServiceOptions,
  ApiKeyStats,
  ApiKeyVerification,
  ApiKeyVerifier,
} from './api-keys/types.ts';
export { type Credential, readCredential } from './credentials.ts';
export { ApiKeyError } from './errors.ts';
export {
  acceptableIdentity,
  type ClaimMapping,
  claimMappingFrom,
  DEFAULT_CLAIM_MAPPING,
  DEFAULT_USERNAME_PREFIX,
  identityFromClaims,
  usernamePrefixFrom,
} from './identity.ts';
export {
  accessTokenTypeFrom,
  clockToleranceFrom,
  createJwtVerifier,
  DEFAULT_CLOCK_TOLERANCE_SEC,
  DEFAULT_JWT_ALGORITHMS,
  JwtError,
  type JwtVerifier,
  parseAudiences,
} from './jwt.ts';
export {
  type AuthMiddlewareOptions,
  type AuthVariables,
  authMiddleware,
  DEFAULT_PUBLIC_PATHS,
} from './middleware.ts';
export { AUTH_MODES, type AuthMode, acceptsApiKeys, acceptsJwt, resolveAuthMode } from './mode.ts';
export { ANONYMOUS, type Principal, type PrincipalVariables } from './principal.ts';

export interface AuthSetup {
  mode: AuthMode;
  middleware: MiddlewareHandler;
  apiKeys: ApiKeyService;
  jwt?: JwtVerifier;
  /** Stops the informer (when this setup started one) and flushes pending last-used times. */
  stop(): Promise<void>;
}

export interface AuthSetupOptions {
  /** The API service's identity: its own API key cache when `cache` is absent, and `client`'s default. */
  kc: KubeConfig;
  /** The process's client (API key writes); a live one from `kc` when absent. */
  client?: Client;
  namespace: string;
  logger: Logger;
  env?: NodeJS.ProcessEnv;
  /** The shared informer cache (holding Secrets); otherwise an own cache of API key Secrets is started. */
  cache?: InformerCache;
  bcryptCost?: number;
  publicPaths?: string[];
}

/**
 * Everything `berth api` needs for authentication, from the environment: AUTH_MODE,
 * OIDC_ISSUER_URL, OIDC_APPLICATION_ID, JWT_CLOCK_TOLERANCE_SECONDS, OIDC_ACCESS_TOKEN_TYPE, and OIDC_USERNAME_CLAIM /
 * OIDC_USERNAME_PREFIX / OIDC_GROUPS_CLAIM (whom a token acts as). The API key service exists in every mode (keys can be
 * managed in open mode too); a JWT verifier only where JWTs are accepted.
 */
export async function setupAuth(opts: AuthSetupOptions): Promise<AuthSetup> {
  const env = opts.env ?? process.env;
  const mode = resolveAuthMode(env.AUTH_MODE, opts.logger);
  // Configuration errors first, so a failed start-up leaves no informer running.
  const jwt = acceptsJwt(mode)
    ? createJwtVerifier({
        issuer: env.OIDC_ISSUER_URL ?? '',
        audience: parseAudiences(env.OIDC_APPLICATION_ID),
        clockToleranceSec: clockToleranceFrom(env.JWT_CLOCK_TOLERANCE_SECONDS),
        claims: claimMappingFrom(env),
        accessTokenType: accessTokenTypeFrom(env.OIDC_ACCESS_TOKEN_TYPE),
        logger: opts.logger,
      })
    : undefined;
  const secrets =
    opts.cache ?? (await startApiKeyCache({ kc: opts.kc, namespace: opts.namespace, logger: opts.logger }));
  const own = secrets === opts.cache ? undefined : secrets;
  const apiKeys = new ApiKeyService({
    client: opts.client ?? createClient({ kc: opts.kc, scheme: new Scheme() }),
    namespace: opts.namespace,
    source: secretSourceFrom(secrets, opts.namespace),
    logger: opts.logger,
    bcryptCost: opts.bcryptCost,
  });
  const middleware = authMiddleware({
    mode,
    apiKeys,
    jwt,
    logger: opts.logger,
    publicPaths: opts.publicPaths,
  });
  opts.logger.info({ authMode: mode, namespace: opts.namespace }, 'authentication configured');
  return {
    mode,
    middleware,
    apiKeys,
    jwt,
    async stop() {
      await apiKeys.stop();
      await own?.stop();
    },
  };
}
