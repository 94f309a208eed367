import type { Logger } from '../log/index.ts';

/** `AUTH_MODE` of the spec: who may call the API service, and with which credentials. */
export const AUTH_MODES = ['open', 'basic', 'sso', 'hybrid'] as const;
export type AuthMode = (typeof AUTH_MODES)[number];

const warned = new Set<string>();

export function isAuthMode(value: string): value is AuthMode {
  return (AUTH_MODES as readonly string[]).includes(value);
}

/**
 * Resolves `AUTH_MODE`. The spec makes an invalid value fall back to `open` with a warning (never
 * an error response): the warning is logged once per process and value, so a config reloaded on
 * every request cannot flood the log. Unset means `open` (local development) without a warning.
 */
export function resolveAuthMode(value: string | undefined, logger?: Pick<Logger, 'warn'>): AuthMode {
  const normalized = (value ?? '').trim().toLowerCase();
  if (normalized === '') return 'open';
  if (isAuthMode(normalized)) return normalized;
  if (!warned.has(normalized)) {
    warned.add(normalized);
    logger?.warn(
      { authMode: value, fallback: 'open', valid: AUTH_MODES },
      `invalid AUTH_MODE "${value}": falling back to open (no authentication)`,
    );
  }
  return 'open';
}

/** Which credential kinds a mode accepts. */
export function acceptsApiKeys(mode: AuthMode): boolean {
  return mode === 'basic' || mode === 'hybrid';
}

export function acceptsJwt(mode: AuthMode): boolean {
  return mode === 'sso' || mode === 'hybrid';
}
