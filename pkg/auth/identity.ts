import type { Identity } from '../kube/client/types.ts';

/**
 * How a bearer JWT becomes the Kubernetes user the API impersonates, with kube-apiserver's own OIDC
 * flags: `OIDC_USERNAME_CLAIM` (default `sub`), `OIDC_USERNAME_PREFIX` (default `oidc:`) and
 * `OIDC_GROUPS_CLAIM` (default `groups`).
 */
export interface ClaimMapping {
  usernameClaim: string;
  usernamePrefix: string;
  groupsClaim: string;
}

/**
 * The default prefix puts every token's user in a name space of its own: without it, a provider
 * whose `sub` (or chosen claim) is `admin`, `kubernetes-admin` or a node's name would act as the
 * Kubernetes user of that name, with whatever RBAC grants that user. `system:` is Kubernetes' own.
 */
export const DEFAULT_USERNAME_PREFIX = 'oidc:';

/** `OIDC_USERNAME_PREFIX=-` means "no prefix", as kube-apiserver's `--oidc-username-prefix=-`. */
export const NO_PREFIX = '-';

export const DEFAULT_CLAIM_MAPPING: ClaimMapping = Object.freeze({
  usernameClaim: 'sub',
  usernamePrefix: DEFAULT_USERNAME_PREFIX,
  groupsClaim: 'groups',
});

/**
 * OIDC_USERNAME_PREFIX: unset or blank → `oidc:` (an empty value in a manifest is no decision to
 * share names with Kubernetes users); `-` → none, deliberately; anything else as written
 * (kube-apiserver's prefixes end in ':' or '#' by convention).
 */
export function usernamePrefixFrom(value: string | undefined): string {
  const v = value?.trim() ?? '';
  if (v === '') return DEFAULT_USERNAME_PREFIX;
  return v === NO_PREFIX ? '' : v;
}

/** The mapping from the environment; unset or blank variables keep the defaults. */
export function claimMappingFrom(env: NodeJS.ProcessEnv): ClaimMapping {
  const pick = (v: string | undefined, d: string) => (v?.trim() ? v.trim() : d);
  return {
    usernameClaim: pick(env.OIDC_USERNAME_CLAIM, DEFAULT_CLAIM_MAPPING.usernameClaim),
    usernamePrefix: usernamePrefixFrom(env.OIDC_USERNAME_PREFIX),
    groupsClaim: pick(env.OIDC_GROUPS_CLAIM, DEFAULT_CLAIM_MAPPING.groupsClaim),
  };
}

// `system:` names are Kubernetes' own (system:masters, system:serviceaccount:…): a token, whatever
// its issuer put in it, must never make the API impersonate one of them.
const reserved = (name: string) => name.startsWith('system:');

/** The groups of a claim: a list of strings, or one string (as kube-apiserver accepts both). */
export function groupsOf(value: unknown): string[] | undefined {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((g): g is string => typeof g === 'string');
  return undefined;
}

/**
 * The identity a token acts as, or undefined when its username claim is missing, not a string,
 * an unverified `email` (kube-apiserver refuses those too) or names a reserved `system:` user.
 * Groups under `system:` are dropped.
 */
export function identityFromClaims(claims: Record<string, unknown>, m: ClaimMapping): Identity | undefined {
  const raw = claims[m.usernameClaim];
  if (typeof raw !== 'string' || raw === '') return undefined;
  if (m.usernameClaim === 'email' && claims.email_verified === false) return undefined;
  const user = `${m.usernamePrefix}${raw}`;
  if (reserved(user)) return undefined;
  const groups = (groupsOf(claims[m.groupsClaim]) ?? []).filter((g) => g !== '' && !reserved(g));
  return { user, groups };
}

/** Recorded identities (API keys) pass the same reservation rule when they are read back. */
export function acceptableIdentity(id: Identity | undefined): Identity | undefined {
  if (!id?.user || reserved(id.user)) return undefined;
  return { user: id.user, groups: (id.groups ?? []).filter((g) => g !== '' && !reserved(g)) };
}
