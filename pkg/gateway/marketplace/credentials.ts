import type { V1Secret } from '@kubernetes/client-node';
import { MARKETPLACE_CREDENTIAL_LABEL } from '../../api/index.ts';
import { ignoreNotFound } from '../../kube/client/helpers.ts';
import type { Client } from '../../kube/client/types.ts';
import { KubeError } from '../../kube/errors.ts';
import { CoreKinds, type KindRef } from '../../kube/kinds.ts';
import { FetchFailure } from './fetch-failure.ts';
import { CREDENTIAL_KEY, credentialSecretName, SECRET_FIELD_MANAGER } from './names.ts';
import type { StoredSource } from './schemas.ts';
import type { Credential } from './source-fetch.ts';

const SECRET = CoreKinds.Secret as KindRef<V1Secret>;

/** A credential as read for one fetch, with the identity of its version (part of the cache key). */
export interface ReadCredential {
  credential: Credential;
  version: string;
}

/**
 * The URL a credential was given for, recorded on its Secret: a Secret whose URL is not the
 * source's is never used (rule 3 holds even if two edits race, or the map is edited by hand).
 */
export const CREDENTIAL_URL = 'berth.dev/marketplace-url';

/** Writes (or rotates) a source's credential Secret as the user: server-side apply, key `value`. */
export function writeCredential(
  client: Client,
  namespace: string,
  source: string,
  url: string,
  credential: Credential,
): Promise<V1Secret> {
  const secret: V1Secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'Opaque',
    metadata: {
      name: credentialSecretName(source),
      namespace,
      // The label keeps it out of the Secrets API and the engine (older ones are known by name).
      labels: { 'app.kubernetes.io/managed-by': 'berth', [MARKETPLACE_CREDENTIAL_LABEL]: 'true' },
      annotations: { 'berth.dev/marketplace-source': source, [CREDENTIAL_URL]: url },
    },
    data: { [CREDENTIAL_KEY]: Buffer.from(credential.value, 'utf8').toString('base64') },
  };
  return client.apply(SECRET, secret, { fieldManager: SECRET_FIELD_MANAGER, force: true });
}

/** Deletes the Secret this API writes for `source` (absent is fine). */
export async function deleteCredential(client: Client, namespace: string, source: string): Promise<void> {
  await ignoreNotFound(client.delete(SECRET, { namespace, name: credentialSecretName(source) }));
}

/**
 * Reads a source's credential as the requesting user. Whatever keeps the user from it — no `get`
 * on the Secret (rule 8: that right is what permits use of a private source), no Secret, no
 * `value` key, a Secret given for another URL — is the source's `auth_error`; the Secret's uid and resourceVersion identify the
 * version, so a rotated credential never matches what the cache holds for the old one.
 */
export async function readCredential(
  client: Client,
  namespace: string,
  source: StoredSource & { auth: NonNullable<StoredSource['auth']> },
  signal: AbortSignal,
): Promise<ReadCredential> {
  const { auth } = source;
  let secret: V1Secret;
  try {
    secret = await client.get(SECRET, { namespace, name: auth.secretRef }, { signal });
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    if (err instanceof KubeError && err.reason === 'Forbidden')
      throw new FetchFailure('auth_error', `the credential Secret ${auth.secretRef} is not readable by you`);
    if (err instanceof KubeError && err.reason === 'NotFound')
      throw new FetchFailure('auth_error', `the credential Secret ${auth.secretRef} does not exist`);
    const reason = err instanceof KubeError ? err.reason : 'unknown error';
    throw new FetchFailure(
      'auth_error',
      `the credential Secret ${auth.secretRef} could not be read (${reason})`,
    );
  }
  // A Secret made elsewhere (a chart's, for a seeded source) records no URL and is used as given.
  const givenFor = secret.metadata?.annotations?.[CREDENTIAL_URL];
  if (givenFor !== undefined && givenFor !== source.url)
    throw new FetchFailure(
      'auth_error',
      `the credential Secret ${auth.secretRef} was given for another URL; give the credential again`,
    );
  const encoded = secret.data?.[CREDENTIAL_KEY];
  if (!encoded)
    throw new FetchFailure(
      'auth_error',
      `the credential Secret ${auth.secretRef} has no key "${CREDENTIAL_KEY}"`,
    );
  return {
    credential: { scheme: auth.scheme, value: Buffer.from(encoded, 'base64').toString('utf8') },
    version: `${secret.metadata?.uid}/${secret.metadata?.resourceVersion}`,
  };
}
