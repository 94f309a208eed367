import type { KubeConfig } from '@kubernetes/client-node';
import type { MiddlewareHandler } from 'hono';
import type { Logger } from '../log/index.ts';
import { ApiKeySecretCache, type SecretSource } from './api-keys/secret-cache.ts';
import { ApiKeyService } from './api-keys/service.ts';
import { createJwtVerifier, type JwtVerifier, parseAudiences } from './jwt.ts';
import { authMiddleware } from './middleware.ts';
import { type AuthMode, acceptsJwt, resolveAuthMode } from './mode.ts';

export { apiKeyRoutes } from './api-keys/routes.ts';
export { ApiKeySecretCache, type SecretSource, secretSourceFrom } from './api-keys/secret-cache.ts';
export {
  type ApiKeyFailure,
  ApiKeyService,
  type ApiKeyServiceOptions,
  type ApiKeyStats,
  type ApiKeyVerification,
  type ApiKeyVerifier,
} from './api-keys/service.ts';
export { type Credential, readCredential } from './credentials.ts';
export { ApiKeyError } from './errors.ts';
export {
  createJwtVerifier,
  DEFAULT_JWT_ALGORITHMS,
  JwtError,
  type JwtVerifier,
  parseAudiences,
} from './jwt.ts';
export { type AuthMiddlewareOptions, authMiddleware, DEFAULT_PUBLIC_PATHS } from './middleware.ts';
export { AUTH_MODES, type AuthMode, acceptsApiKeys, acceptsJwt, resolveAuthMode } from './mode.ts';
export { ANONYMOUS, type Principal } from './principal.ts';

export interface AuthSetup {
  mode: AuthMode;
  middleware: MiddlewareHandler;
  apiKeys: ApiKeyService;
  jwt?: JwtVerifier;
  /** Stops the informer (when this setup started one) and flushes pending last-used times. */
  stop(): Promise<void>;
}

export interface AuthSetupOptions {
  kc: KubeConfig;
  namespace: string;
  logger: Logger;
  env?: NodeJS.ProcessEnv;
  /** A shared informer cache (berth up); otherwise an own informer is started. */
  source?: SecretSource;
  bcryptCost?: number;
  publicPaths?: string[];
}

/**
 * Everything `berth api` needs for authentication, from the environment: AUTH_MODE,
 * OIDC_ISSUER_URL, OIDC_APPLICATION_ID. The API key service exists in every mode (keys can be
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
        logger: opts.logger,
      })
    : undefined;
  const own = opts.source
    ? undefined
    : new ApiKeySecretCache({ kc: opts.kc, namespace: opts.namespace, logger: opts.logger });
  await own?.start();
  const apiKeys = new ApiKeyService({
    kc: opts.kc,
    namespace: opts.namespace,
    source: opts.source ?? (own as ApiKeySecretCache),
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
