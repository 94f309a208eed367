import { httpError } from '../../http/index.ts';
import { credentialNameProblem, credentialSecretName } from './names.ts';
import type { PatchSourceBody, StoredSource } from './schemas.ts';
import type { Credential } from './source-fetch.ts';
import type { Decoded } from './store.ts';

export interface Merged {
  next: StoredSource;
  /** A new credential to test-fetch and write (the body's). */
  credential?: Credential;
  /** `auth: null` on a source whose Secret this API wrote: that Secret goes too. */
  dropSecret: boolean;
}

/**
 * A PATCH on the stored source (a merge: absent fields are kept), with rule 3: a source that has a
 * credential keeps it only while its URL stays; a new URL (or scheme) needs the credential again,
 * so an existing Secret is never sent to an address it was not given for. `auth: null` makes the
 * source public. An entry that no longer decodes can be repaired by giving a `url`.
 */
export function merge(name: string, current: Decoded, body: PatchSourceBody): Merged {
  const cur: StoredSource = 'source' in current ? current.source : { url: '' };
  const url = body.url ?? cur.url;
  const urlChanged = url !== cur.url;
  const displayName = body.displayName === undefined ? cur.displayName : body.displayName || undefined;
  const base = { url, ...(displayName ? { displayName } : {}) };

  if (body.auth === null)
    return { next: base, dropSecret: cur.auth?.secretRef === credentialSecretName(name) };

  if (body.auth) {
    const bad = credentialNameProblem(name);
    if (bad) throw httpError('invalid_name', bad);
    const credential = { scheme: body.auth.scheme, value: body.auth.credential };
    return {
      next: { ...base, auth: { scheme: credential.scheme, secretRef: credentialSecretName(name) } },
      credential,
      dropSecret: false,
    };
  }

  if (cur.auth && urlChanged)
    throw httpError(
      'credential_required',
      'changing the url of a source with a credential needs the credential again (auth.scheme and auth.credential), or auth: null to make it public',
    );
  return { next: { ...base, ...(cur.auth ? { auth: cur.auth } : {}) }, dropSecret: false };
}
