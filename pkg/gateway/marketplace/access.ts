import type { Context } from 'hono';
import { MARKETPLACE_SOURCES_CONFIGMAP } from '../../api/index.ts';
import type { Principal } from '../../auth/index.ts';
import { HttpError } from '../../http/index.ts';
import type { Client } from '../../kube/client/types.ts';
import { CoreKinds, type SelfSubjectAccessReview } from '../../kube/kinds.ts';

/** Whom a marketplace call acts as: the client, and a name for logs and messages. */
export interface Acting {
  client: Client;
  who: string;
}

/**
 * Every marketplace call runs as the requesting user (spec, Authentication 6): a JWT's mapped
 * Kubernetes user, or the user an API key recorded when it was created, impersonated with
 * `Impersonate-User` and one `Impersonate-Group` per group. In `open` mode (anonymous) there is no
 * user and the API acts as its own service account — as it also does for an API key whose creator
 * was anonymous, the identity every other endpoint uses for that key. A token without a usable
 * username claim is refused rather than served under any other identity.
 */
export function actingAs(c: Context, own: Client): Acting {
  const p: Principal | undefined = c.get('principal');
  if (!p || p.kind === 'anonymous') return { client: own, who: 'the API service account' };
  if (p.actsAs) return { client: own.as(p.actsAs), who: `user "${p.actsAs.user}"` };
  if (p.kind === 'api-key') return { client: own, who: 'the API service account' };
  throw new HttpError(
    403,
    'forbidden',
    'the bearer token names no Kubernetes user to act as (its username claim, OIDC_USERNAME_CLAIM, is missing, unverified or reserved)',
  );
}

export interface Right {
  verb: string;
  resource: 'configmaps' | 'secrets';
  name?: string;
}

const onMap = (verb: string): Right => ({
  verb,
  resource: 'configmaps',
  name: MARKETPLACE_SOURCES_CONFIGMAP,
});
const onSecrets = (verb: string): Right => ({ verb, resource: 'secrets' });

/** Rule 8, exactly: get/update/patch on the sources map; create/get/update/patch/delete on Secrets. */
export const EDIT_RIGHTS: readonly Right[] = [
  ...['get', 'update', 'patch'].map(onMap),
  ...['create', 'get', 'update', 'patch', 'delete'].map(onSecrets),
];
/** What each write needs: the map's key, and for a credential its Secret. */
export const WRITE_KEY: readonly Right[] = [onMap('patch')];
export const WRITE_SECRET: readonly Right[] = [onSecrets('create'), onSecrets('patch')];
export const DELETE_SECRET: readonly Right[] = [onSecrets('delete')];

const label = (r: Right) => `${r.verb} ${r.resource}${r.name ? `/${r.name}` : ''}`;

/**
 * Asks the API server, through SelfSubjectAccessReviews made as the acting client, which of
 * `rights` it lacks in `namespace`. Made as the user, the answer is the user's: the API needs no
 * right to review others (every authenticated user may review itself).
 */
export async function missingRights(client: Client, namespace: string, rights: readonly Right[]) {
  const answers = await Promise.all(
    rights.map(async (r) => {
      const review = await client.create(CoreKinds.SelfSubjectAccessReview, {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SelfSubjectAccessReview',
        spec: { resourceAttributes: { verb: r.verb, resource: r.resource, namespace, name: r.name } },
      } as SelfSubjectAccessReview);
      return review.status?.allowed === true ? undefined : label(r);
    }),
  );
  return answers.filter((a): a is string => a !== undefined);
}

/** A 403 naming what is missing, when any of `rights` is; SSAR failures propagate. */
export async function requireRights(acting: Acting, namespace: string, rights: readonly Right[]) {
  const missing = await missingRights(acting.client, namespace, rights);
  if (missing.length)
    throw new HttpError(
      403,
      'forbidden',
      `${acting.who} may not edit marketplace sources in namespace ${namespace}: missing ${missing.join(', ')}`,
    );
}
