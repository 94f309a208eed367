import { z } from 'zod';
import { type AuthMode, acceptsJwt, resolveAuthMode } from '../auth/mode.ts';
import type { Logger } from '../log/index.ts';

/** A setting that cannot work: the message names the variable, so `berth dashboard` exits with it. */
export class SettingsError extends Error {
  override name = 'SettingsError';
}

export interface OidcSettings {
  /** OIDC_PROVIDER_ID: the path segment of the callback, `<AUTH_URL>/callback/<id>`. */
  providerId: string;
  providerName: string;
  issuer: string;
  clientId: string;
  clientSecret?: string;
}

export interface DashboardSettings {
  mode: AuthMode;
  /** BASE_PATH (the spec's `app.config.basePath`): '' or `/<segment>…`, no trailing slash. */
  basePath: string;
  /** BASE_URL without a trailing slash; always set in sso/hybrid, where redirects need it. */
  baseUrl?: string;
  /** AUTH_URL without a trailing slash (`<BASE_URL>/api/auth`). */
  authUrl?: string;
  /** API_SERVICE_URL (the spec's `app.config.arkApiService.host`), no trailing slash. */
  apiServiceUrl: string;
  /** Cookies get `Secure` when the dashboard is reached over https (BASE_URL's scheme). */
  secureCookies: boolean;
  /** AUTH_ALLOWED_CALLBACK_ORIGINS: other dashboards this one may send users back to after sign-in. */
  allowedCallbackOrigins: string[];
  /** AUTH_SECRET; set in sso/hybrid, where it keys the session and sign-in cookies. */
  authSecret?: string;
  oidc?: OidcSettings;
  authDebug: boolean;
  logLevel: string;
}

const httpUrl = (name: string) =>
  z.url({
    protocol: /^https?$/,
    error: `${name} must be an absolute http(s) URL`,
  });

// Kubernetes manifests often render an unset value as "": treat it as unset, not as a bad value.
const blankIsUnset = (env: NodeJS.ProcessEnv) =>
  Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== ''));

const schema = z.object({
  AUTH_MODE: z.string().optional(),
  AUTH_SECRET: z
    .string()
    .min(32, 'AUTH_SECRET must be at least 32 characters (for example `openssl rand -base64 32`)')
    .optional(),
  BASE_URL: httpUrl('BASE_URL').optional(),
  AUTH_URL: httpUrl('AUTH_URL').optional(),
  BASE_PATH: z
    .string()
    .refine(
      (v) =>
        !v.includes('//') &&
        v
          .split('/')
          .filter(Boolean)
          .every((seg) => /^[A-Za-z0-9._~-]+$/.test(seg) && seg !== '.' && seg !== '..'),
      'BASE_PATH must be a URL path such as /team-a (letters, digits, "-", ".", "_", "~" per segment)',
    )
    .optional(),
  OIDC_PROVIDER_ID: z
    .string()
    .regex(
      /^[A-Za-z0-9_-]+$/,
      'OIDC_PROVIDER_ID must be letters, digits, "-" or "_" (it is a URL path segment)',
    )
    .optional(),
  OIDC_ISSUER_URL: httpUrl('OIDC_ISSUER_URL').optional(),
  OIDC_CLIENT_ID: z.string().optional(),
  OIDC_CLIENT_SECRET: z.string().optional(),
  OIDC_PROVIDER_NAME: z.string().optional(),
  AUTH_DEBUG: z.enum(['true', 'false'], { error: 'AUTH_DEBUG must be "true" or "false"' }).optional(),
  AUTH_ALLOWED_CALLBACK_ORIGINS: z.string().optional(),
  API_SERVICE_URL: httpUrl('API_SERVICE_URL').default('http://127.0.0.1:8000'),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
      error: 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
    })
    .default('info'),
});

const trimSlash = (s: string) => s.replace(/\/+$/, '');

/** What only sso and hybrid use. */
const SIGN_IN_SETTINGS = [
  'AUTH_SECRET',
  'BASE_URL',
  'AUTH_URL',
  'OIDC_PROVIDER_ID',
  'OIDC_ISSUER_URL',
  'OIDC_CLIENT_ID',
  'OIDC_CLIENT_SECRET',
  'OIDC_PROVIDER_NAME',
  'AUTH_ALLOWED_CALLBACK_ORIGINS',
];

const omit = (env: Record<string, string | undefined>, names: string[]) =>
  Object.fromEntries(Object.entries(env).filter(([k]) => !names.includes(k)));

export function normalizeBasePath(raw: string | undefined): string {
  const trimmed = trimSlash((raw ?? '').trim());
  if (trimmed === '') return '';
  return trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
}

function parseOrigins(raw: string | undefined, problems: string[]): string[] {
  const origins: string[] = [];
  for (const item of (raw ?? '').split(',').map((s) => s.trim())) {
    if (!item) continue;
    let url: URL | undefined;
    try {
      url = new URL(item);
    } catch {
      url = undefined;
    }
    if (!url || !/^https?:$/.test(url.protocol) || trimSlash(url.pathname) !== '' || url.search) {
      problems.push(
        `AUTH_ALLOWED_CALLBACK_ORIGINS: ${JSON.stringify(item)} is not an origin (scheme://host[:port])`,
      );
    } else origins.push(url.origin);
  }
  return origins;
}

/**
 * The spec's "Dashboard settings" from the environment, checked all at once so an operator sees
 * every mistake in one message. What sso/hybrid need (AUTH_SECRET, BASE_URL, the OIDC client) is
 * required there only: `open` and `basic` do no sign-in. BASE_URL, BASE_PATH and AUTH_URL must agree,
 * since a mismatch is what makes sign-in loop back to `/api/auth/signin` (spec).
 */
export function loadDashboardSettings(
  env: NodeJS.ProcessEnv,
  logger?: Pick<Logger, 'warn'>,
): DashboardSettings {
  const mode = resolveAuthMode(env.AUTH_MODE, logger);
  const sso = acceptsJwt(mode);
  // Without sign-in the sign-in settings are not read at all: a generic BASE_URL some other tool
  // left in the environment (vitest sets one) must not stop an `open` dashboard.
  const read = sso ? blankIsUnset(env) : omit(blankIsUnset(env), SIGN_IN_SETTINGS);
  const parsed = schema.safeParse(read);
  if (!parsed.success)
    throw new SettingsError(`invalid configuration: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
  const e = parsed.data;
  const problems: string[] = [];
  const basePath = normalizeBasePath(e.BASE_PATH);
  const baseUrl = e.BASE_URL && trimSlash(e.BASE_URL);
  const need = (name: keyof typeof e, why: string) => {
    if (e[name] === undefined) problems.push(`${name} is required when AUTH_MODE=${mode} (${why})`);
  };
  if (sso) {
    need('AUTH_SECRET', 'it encrypts the session cookie');
    need('BASE_URL', "the dashboard's external URL, including any base path");
    need('OIDC_PROVIDER_ID', 'the callback is <AUTH_URL>/callback/<OIDC_PROVIDER_ID>');
    need('OIDC_ISSUER_URL', "the OpenID provider's issuer");
    need('OIDC_CLIENT_ID', "the dashboard's client id at the provider");
  }
  if (baseUrl) {
    const path = trimSlash(new URL(baseUrl).pathname);
    if (path !== basePath)
      problems.push(
        `BASE_URL ${baseUrl} has the path "${path}" but BASE_PATH is "${basePath}": they must be the same prefix`,
      );
    if (new URL(baseUrl).search || new URL(baseUrl).hash)
      problems.push('BASE_URL must not have a query or fragment');
  }
  const expectedAuthUrl = baseUrl && `${baseUrl}/api/auth`;
  const authUrl = e.AUTH_URL ? trimSlash(e.AUTH_URL) : expectedAuthUrl;
  if (e.AUTH_URL && expectedAuthUrl && authUrl !== expectedAuthUrl)
    problems.push(`AUTH_URL must be ${expectedAuthUrl} (<BASE_URL>/api/auth), got ${e.AUTH_URL}`);
  if (e.AUTH_URL && !baseUrl) problems.push('AUTH_URL is set but BASE_URL is not: set both');
  const allowedCallbackOrigins = parseOrigins(e.AUTH_ALLOWED_CALLBACK_ORIGINS, problems);
  if (problems.length) throw new SettingsError(`invalid configuration: ${problems.join('; ')}`);

  return {
    mode,
    basePath,
    ...(baseUrl ? { baseUrl } : {}),
    ...(authUrl ? { authUrl } : {}),
    apiServiceUrl: trimSlash(e.API_SERVICE_URL),
    secureCookies: baseUrl?.startsWith('https:') ?? false,
    allowedCallbackOrigins,
    ...(sso ? { authSecret: e.AUTH_SECRET } : {}),
    ...(sso
      ? {
          oidc: {
            providerId: e.OIDC_PROVIDER_ID as string,
            providerName: e.OIDC_PROVIDER_NAME ?? e.OIDC_PROVIDER_ID ?? 'OpenID provider',
            issuer: e.OIDC_ISSUER_URL as string,
            clientId: e.OIDC_CLIENT_ID as string,
            ...(e.OIDC_CLIENT_SECRET ? { clientSecret: e.OIDC_CLIENT_SECRET } : {}),
          },
        }
      : {}),
    authDebug: e.AUTH_DEBUG === 'true',
    logLevel: e.AUTH_DEBUG === 'true' && e.LOG_LEVEL !== 'trace' ? 'debug' : e.LOG_LEVEL,
  };
}
