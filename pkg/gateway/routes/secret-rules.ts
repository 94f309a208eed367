/**
 * What a caller of the Secrets API may write (issue 26 item 2 and the opt-in half of item 3). The
 * API writes Secrets as its own service account, so anything the cluster would do with a Secret on
 * its own — the token controller filling in a service-account token, the engine sending a value
 * to a Model or Tool URL — must be decided here, before the write.
 */
import type { KubernetesObject, V1Secret } from '@kubernetes/client-node';
import {
  API_KEY_SECRET_TYPE,
  isMarketplaceCredential,
  MARKETPLACE_CREDENTIAL_LABEL,
  optsInToEngine,
  SECRET_USAGE_ENGINE,
  SECRET_USAGE_LABEL,
} from '../../api/index.ts';
import { httpError } from '../../http/index.ts';

/**
 * The types a caller may create (and the only ones this API changes). Not
 * `kubernetes.io/service-account-token` (the token controller would put a token of the named
 * service account in it), not `berth.dev/api-key` (made by /v1/api-keys), nothing else either.
 */
export const CREATABLE_SECRET_TYPES: readonly string[] = [
  'Opaque',
  'kubernetes.io/basic-auth',
  'kubernetes.io/tls',
  'kubernetes.io/dockerconfigjson',
];

/** Annotations the token controller acts on (`kubernetes.io/service-account.name`, `.uid`, …). */
const SERVICE_ACCOUNT_ANNOTATION = 'kubernetes.io/service-account.';

interface WrittenMeta {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** 400 `invalid`: a Secret write refused here, before the API server (whose `invalid` is a 422) sees it. */
export const refuse = (message: string) => httpError('invalid', message, undefined, { status: 400 });

/** The Secrets the API-key and marketplace endpoints own: invisible here (404 for every verb). */
export function managedElsewhere(s: KubernetesObject | undefined): boolean {
  return !!s && ((s as V1Secret).type === API_KEY_SECRET_TYPE || isMarketplaceCredential(s as V1Secret));
}

/** Throws 400 when a caller may not create a Secret of this type and name. */
export function checkCreate(type: string, name: string): void {
  const allowed = `allowed types: ${CREATABLE_SECRET_TYPES.join(', ')}`;
  if (type === API_KEY_SECRET_TYPE)
    throw refuse(`secrets of type ${API_KEY_SECRET_TYPE} are created through /v1/api-keys; ${allowed}`);
  if (!CREATABLE_SECRET_TYPES.includes(type))
    throw refuse(`secret type ${JSON.stringify(type)} cannot be created here; ${allowed}`);
  if (isMarketplaceCredential({ metadata: { name } }))
    throw refuse(
      `secrets named marketplace-source-<name>-auth hold marketplace credentials and are managed by the marketplace-sources endpoints`,
    );
}

/** Throws 400 when the metadata of a create, PUT or PATCH holds what a caller may not set. */
export function checkMetadata(meta: WrittenMeta | undefined): void {
  for (const key of Object.keys(meta?.annotations ?? {}))
    if (key.toLowerCase().startsWith(SERVICE_ACCOUNT_ANNOTATION))
      throw refuse(
        `annotation ${key} is refused: ${SERVICE_ACCOUNT_ANNOTATION}* annotations would bind the Secret to a service account`,
      );
  if (meta?.labels?.[MARKETPLACE_CREDENTIAL_LABEL] !== undefined)
    throw refuse(`label ${MARKETPLACE_CREDENTIAL_LABEL} is reserved for the marketplace-sources endpoints`);
}

/**
 * Throws 400 for a change of a Secret whose type this API does not create: emptying a
 * service-account token Secret, say, would have the token controller fill in a fresh token.
 */
export function checkChangeable(current: V1Secret, requestedType?: string): void {
  const type = current.type ?? 'Opaque';
  if (!CREATABLE_SECRET_TYPES.includes(type))
    throw refuse(
      `secret ${current.metadata?.name} has type ${type}, which this API does not change; types it manages: ${CREATABLE_SECRET_TYPES.join(', ')}`,
    );
  // Kubernetes keeps a Secret's type for life; a different one in an update is refused, not ignored.
  if (requestedType !== undefined && requestedType !== type)
    throw refuse(
      `secret ${current.metadata?.name} has type ${type}; a Secret's type cannot be changed (got ${JSON.stringify(requestedType.slice(0, 80))})`,
    );
}

/**
 * Throws 403 when a PATCH would opt a Secret in to engine use without replacing its values: the
 * caller would choose where values they never wrote (the dashboard's AUTH_SECRET, another team's
 * key) are sent. Creating the Secret with the label, or a PUT (which replaces every value), may.
 */
export function checkPatchOptIn(current: V1Secret, patch: WrittenMeta | undefined): void {
  if (optsInToEngine(current)) return;
  const labels = { ...current.metadata?.labels, ...patch?.labels };
  if (!optsInToEngine({ metadata: { labels } })) return;
  throw httpError(
    'forbidden',
    `a PATCH cannot add label ${SECRET_USAGE_LABEL}=${SECRET_USAGE_ENGINE} to secret ${current.metadata?.name}: it would let the engine send values this request did not write; create the Secret with the label, or PUT it with all its values`,
  );
}
