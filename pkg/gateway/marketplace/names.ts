import { createHash } from 'node:crypto';

/** ConfigMap key rules (the API server's IsConfigMapKey): letters, digits, `-`, `_`, `.`; ≤ 253. */
const CONFIGMAP_KEY = /^[-._a-zA-Z0-9]+$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** `…/marketplace-sources/permissions` is the probe, so no source may take that name. */
export const RESERVED_NAMES = new Set(['permissions']);

/** Why `name` cannot name a source; undefined when it can. */
export function nameProblem(name: string): string | undefined {
  if (name.length > 253) return 'name must be at most 253 characters';
  if (!CONFIGMAP_KEY.test(name) || name === '.' || name === '..')
    return 'name must be a ConfigMap key: letters, digits, "-", "_" and "." (not "." or "..")';
  if (RESERVED_NAMES.has(name)) return `"${name}" is reserved (it is the permissions probe's path)`;
  return undefined;
}

/** The credential Secret of a source (spec): `marketplace-source-<name>-auth`, key `value`. */
export const credentialSecretName = (name: string) => `marketplace-source-${name}-auth`;
export const CREDENTIAL_KEY = 'value';

/**
 * Why a source with this name cannot hold a credential: its Secret's name must be a DNS subdomain,
 * which a ConfigMap key with capitals or `_` is not.
 */
export function credentialNameProblem(name: string): string | undefined {
  const secret = credentialSecretName(name);
  if (secret.length <= 253 && DNS_SUBDOMAIN.test(secret)) return undefined;
  return `a source with a credential needs a name that fits the Secret name ${secret}: lower-case letters, digits, "-" and "." only, at most 229 characters`;
}

/**
 * The field manager of one source's key: each source has its own, so server-side apply merges
 * concurrent writes of different sources instead of one writer's list replacing the other's.
 * Field managers are at most 128 characters: long names are hashed.
 */
export function fieldManagerFor(name: string): string {
  const plain = `berth-marketplace-${name}`;
  if (plain.length <= 128) return plain;
  return `berth-marketplace-${createHash('sha256').update(name).digest('hex').slice(0, 40)}`;
}

/** The field manager of the credential Secrets written for sources. */
export const SECRET_FIELD_MANAGER = 'berth-marketplace';
