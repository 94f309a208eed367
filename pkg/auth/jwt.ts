import { createRemoteJWKSet, type JWTPayload, errors as joseErrors, jwtVerify } from 'jose';
import type { Logger } from '../log/index.ts';
import { type ClaimMapping, DEFAULT_CLAIM_MAPPING, groupsOf, identityFromClaims } from './identity.ts';
import type { Principal } from './principal.ts';

/** Asymmetric algorithms only: `none` and HS* (shared-secret confusion) can never verify. */
export const DEFAULT_JWT_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
] as const;

export interface JwtVerifierOptions {
  /** OIDC_ISSUER_URL: discovery is read from `<issuer>/.well-known/openid-configuration`. */
  issuer: string;
  /** OIDC_APPLICATION_ID: a token passes if its `aud` matches any of these. */
  audience: string | string[];
  algorithms?: string[];
  /** Allowed clock skew for exp/nbf/iat: JWT_CLOCK_TOLERANCE_SECONDS (default 2 s). */
  clockToleranceSec?: number;
  /** Minimum time between JWKS refetches on an unknown kid (jose default 30 s). */
  jwksCooldownMs?: number;
  /** How long fetched keys are trusted before a refetch (default 10 min). */
  jwksCacheMaxAgeMs?: number;
  /** Timeout of discovery and JWKS requests (default 5 s). */
  timeoutMs?: number;
  /** OIDC_USERNAME_CLAIM / OIDC_USERNAME_PREFIX / OIDC_GROUPS_CLAIM: the Kubernetes user a token acts as. */
  claims?: ClaimMapping;
  /**
   * OIDC_ACCESS_TOKEN_TYPE: when set (e.g. `at+jwt`, RFC 9068), the token's `typ` header must be this
   * media type; unset, any `typ` passes (many providers send `JWT` on access tokens too).
   */
  accessTokenType?: string;
  logger?: Logger;
}

/**
 * A token that did not verify: 401. `unavailable` means the issuer could not be reached (still a
 * 401 — the token is not valid as far as this service can tell — but logged as an outage).
 */
export class JwtError extends Error {
  readonly code: string;
  readonly unavailable: boolean;

  constructor(code: string, message: string, unavailable = false) {
    super(message);
    this.name = 'JwtError';
    this.code = code;
    this.unavailable = unavailable;
  }
}

export interface JwtVerifier {
  verify(token: string): Promise<Extract<Principal, { kind: 'user' }>>;
}

/**
 * Clock skew allowed on `exp`/`nbf`/`iat`. Small by default: an expired token must be refused at
 * once, and clocks synchronised by NTP differ by milliseconds, not seconds.
 */
export const DEFAULT_CLOCK_TOLERANCE_SEC = 2;

/** JWT_CLOCK_TOLERANCE_SECONDS → seconds (default 2; a non-negative number at most 300, else an error). */
export function clockToleranceFrom(value: string | undefined): number {
  if (value === undefined || value.trim() === '') return DEFAULT_CLOCK_TOLERANCE_SEC;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || n > 300)
    throw new Error(
      `JWT_CLOCK_TOLERANCE_SECONDS must be a number of seconds from 0 to 300, not ${JSON.stringify(value)}`,
    );
  return n;
}

/** `OIDC_APPLICATION_ID` (a string or comma-separated list) → audiences. */
export function parseAudiences(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

type Jwks = ReturnType<typeof createRemoteJWKSet>;

/**
 * Bearer JWT verification against an OIDC issuer. Discovery runs once (retried after a failure);
 * jose's remote JWKS caches the keys and refetches on an unknown `kid`, which is how the provider's
 * key rotation is followed without a restart.
 */
export function createJwtVerifier(opts: JwtVerifierOptions): JwtVerifier {
  const audience = Array.isArray(opts.audience) ? opts.audience : parseAudiences(opts.audience);
  if (!opts.issuer) throw new Error('JWT verification needs OIDC_ISSUER_URL');
  if (audience.length === 0) throw new Error('JWT verification needs OIDC_APPLICATION_ID (the audience)');
  const algorithms = opts.algorithms ?? [...DEFAULT_JWT_ALGORITHMS];
  const bad = algorithms.filter((a) => a === 'none' || /^HS/i.test(a));
  if (bad.length) throw new Error(`JWT algorithms must be asymmetric; refusing ${bad.join(', ')}`);
  const timeoutDuration = opts.timeoutMs ?? 5000;
  let discovered: Promise<{ issuer: string; jwks: Jwks }> | undefined;

  const discover = async () => {
    const url = `${opts.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutDuration) });
    if (!res.ok) throw new Error(`OIDC discovery ${url} answered ${res.status}`);
    const doc = (await res.json()) as { issuer?: string; jwks_uri?: string };
    if (!doc.jwks_uri) throw new Error(`OIDC discovery ${url} has no jwks_uri`);
    // OpenID Discovery: the document's issuer must be the one configured (no mix-up).
    if (doc.issuer?.replace(/\/+$/, '') !== opts.issuer.replace(/\/+$/, ''))
      throw new Error(`OIDC discovery ${url} names issuer ${doc.issuer}, expected ${opts.issuer}`);
    const jwks = createRemoteJWKSet(new URL(doc.jwks_uri), {
      timeoutDuration,
      cooldownDuration: opts.jwksCooldownMs ?? 30_000,
      cacheMaxAge: opts.jwksCacheMaxAgeMs ?? 600_000,
    });
    opts.logger?.info({ issuer: doc.issuer, jwksUri: doc.jwks_uri }, 'OIDC issuer discovered');
    return { issuer: doc.issuer, jwks };
  };

  const resolve = () => {
    if (!discovered) {
      discovered = discover();
      // A failed discovery is not cached: the next request tries again.
      discovered.catch((err: unknown) => {
        discovered = undefined;
        opts.logger?.warn({ err, issuer: opts.issuer }, 'OIDC discovery failed');
      });
    }
    return discovered;
  };

  return {
    async verify(token) {
      let issuer: { issuer: string; jwks: Jwks };
      try {
        issuer = await resolve();
      } catch (err) {
        throw new JwtError('issuer_unavailable', `OIDC issuer unreachable: ${(err as Error).message}`, true);
      }
      try {
        const { payload } = await jwtVerify(token, issuer.jwks, {
          issuer: issuer.issuer,
          audience,
          algorithms,
          clockTolerance: opts.clockToleranceSec ?? DEFAULT_CLOCK_TOLERANCE_SEC,
          requiredClaims: ['exp'],
          ...(opts.accessTokenType ? { typ: opts.accessTokenType } : {}),
        });
        refuseIdToken(payload);
        return principalOf(payload, opts.claims ?? DEFAULT_CLAIM_MAPPING);
      } catch (err) {
        throw toJwtError(err);
      }
    },
  };
}

/**
 * Claims only an ID token carries (OpenID Connect Core 2, 3.1.3.6, 3.3.2.11). An ID token says who
 * signed in to a client, not that the client may call this API: a client that got one for a user
 * (any client of the same provider whose id is among the audiences) must not use it as a bearer.
 */
const ID_TOKEN_CLAIMS = ['nonce', 'at_hash', 'c_hash'] as const;

function refuseIdToken(payload: JWTPayload): void {
  const found = ID_TOKEN_CLAIMS.find((k) => payload[k] !== undefined);
  if (found)
    throw new JwtError(
      'id_token_refused',
      `an ID token (it carries "${found}") is not an access token: send the access token`,
    );
}

/** OIDC_ACCESS_TOKEN_TYPE → the `typ` to require, or undefined (blank: no check). */
export function accessTokenTypeFrom(value: string | undefined): string | undefined {
  const v = value?.trim();
  return v ? v : undefined;
}

function toJwtError(err: unknown): JwtError {
  if (err instanceof JwtError) return err;
  if (err instanceof joseErrors.JWKSTimeout)
    return new JwtError('issuer_unavailable', 'JWKS fetch timed out', true);
  if (err instanceof joseErrors.JOSEError) {
    const reason = err instanceof joseErrors.JWTExpired ? 'token expired' : err.message;
    return new JwtError(err.code, reason);
  }
  // Network failure while fetching the JWKS.
  return new JwtError('issuer_unavailable', `JWKS unavailable: ${(err as Error).message}`, true);
}

function principalOf(claims: JWTPayload, mapping: ClaimMapping): Extract<Principal, { kind: 'user' }> {
  const str = (k: string) => (typeof claims[k] === 'string' ? (claims[k] as string) : undefined);
  const groups = groupsOf(claims[mapping.groupsClaim]);
  const actsAs = identityFromClaims(claims as Record<string, unknown>, mapping);
  return {
    kind: 'user',
    name: str('preferred_username') ?? str('email') ?? claims.sub ?? str('client_id') ?? 'unknown',
    subject: claims.sub,
    ...(groups ? { groups } : {}),
    claims: claims as Record<string, unknown>,
    ...(actsAs ? { actsAs } : {}),
  };
}
