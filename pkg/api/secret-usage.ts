/**
 * Which Secrets the engine may read (Model API keys, Tool/Memory/Evaluator header values): only
 * those that opt in with the label `berth.dev/usage: engine`, and never API-key or marketplace
 * credential Secrets, whatever their labels say. A Model or header may name any Secret of its
 * namespace and send the value to any URL; the opt-in keeps Secrets made for something else (the
 * dashboard's AUTH_SECRET, a marketplace token, a service-account token) from being sent anywhere.
 */
import { API_KEY_SECRET_TYPE, GROUP } from './group.ts';

/** The opt-in label and its one value. */
export const SECRET_USAGE_LABEL = `${GROUP}/usage`;
export const SECRET_USAGE_ENGINE = 'engine';

/** Set by the marketplace endpoints on the credential Secrets they write. */
export const MARKETPLACE_CREDENTIAL_LABEL = `${GROUP}/marketplace-credential`;
/** `marketplace-source-<name>-auth`: how credential Secrets written before the label are recognised. */
export const MARKETPLACE_CREDENTIAL_NAME = /^marketplace-source-.+-auth$/;

/** Secret types whose values are credentials of the cluster itself. */
const CLUSTER_CREDENTIAL_TYPES = new Set([
  'kubernetes.io/service-account-token',
  'bootstrap.kubernetes.io/token',
]);

/** The parts of a Secret the rules read. */
export interface SecretMeta {
  type?: string;
  metadata?: { name?: string; labels?: Record<string, string> };
}

export const isMarketplaceCredential = (s: SecretMeta): boolean =>
  s.metadata?.labels?.[MARKETPLACE_CREDENTIAL_LABEL] !== undefined ||
  MARKETPLACE_CREDENTIAL_NAME.test(s.metadata?.name ?? '');

export const optsInToEngine = (s: SecretMeta): boolean =>
  s.metadata?.labels?.[SECRET_USAGE_LABEL] === SECRET_USAGE_ENGINE;

/**
 * Why the engine must not use this Secret, as a message the user can act on (it names the Secret,
 * never a value); undefined when it may.
 */
export function engineUseProblem(s: SecretMeta): string | undefined {
  const what = `secret ${s.metadata?.name ?? '(unnamed)'} is not usable by the engine`;
  if (s.type === API_KEY_SECRET_TYPE) return `${what}: it holds a Berth API key (type ${s.type})`;
  if (isMarketplaceCredential(s)) return `${what}: it is a marketplace source credential`;
  if (s.type && CLUSTER_CREDENTIAL_TYPES.has(s.type))
    return `${what}: it is a cluster credential (type ${s.type})`;
  if (!optsInToEngine(s)) return `${what}: add label ${SECRET_USAGE_LABEL}=${SECRET_USAGE_ENGINE}`;
  return undefined;
}
