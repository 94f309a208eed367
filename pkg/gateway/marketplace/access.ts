import type { Context } from 'hono';
import { MARKETPLACE_SOURCES_CONFIGMAP } from '../../api/index.ts';
import type { Principal } from '../../auth/index.ts';
import { httpError } from '../../http/index.ts';
import type { Client, Identity } from '../../kube/client/types.ts';
import { CoreKinds, kindRef, type SelfSubjectAccessReview } from '../../kube/kinds.ts';
import { impersonableGroups } from './impersonable.ts';

/** A SelfSubjectAccessReview's question, asked about `user` and `groups` in `metadata.namespace`. */
interface LocalSubjectAccessReview {
  apiVersion: string;
  kind: string;
  metadata: { namespace: string };
  spec: SelfSubjectAccessReview['spec'] & { user: string; groups: string[] };
  status?: SelfSubjectAccessReview['status'];
}

// Created (never read back) by the API's own account: the API server answers for the named user
// within that one namespace (the API's Role grants `create` on it there, nowhere else).
const LocalSubjectAccessReviewRef = kindRef<LocalSubjectAccessReview>({
  group: 'authorization.k8s.io',
  version: 'v1',
  kind: 'LocalSubjectAccessReview',
  plural: 'localsubjectaccessreviews',
  namespaced: true,
});

/** Whom a marketplace call acts as: the client, and a name for logs and messages. */
export interface Acting {
  client: Client;
  who: string;
  /** The API's own client: what access reviews about `identity` are asked with. */
  own: Client;
  /** The user impersonated; absent when the API acts as its own service account. */
  identity?: Identity;
}

/**
 * Every marketplace call runs as the requesting user (spec, Authentication 6): a JWT's mapped
 * Kubernetes user, or the user an API key recorded when it was created, impersonated with
 * `Impersonate-User` and one `Impersonate-Group` per group the API may impersonate (the others
 * are dropped: see impersonable.ts). In `open` mode (anonymous) there is no user and the API acts
 * as its own service account — as it also does for an API key whose creator was anonymous, the
 * identity every other endpoint uses for that key. A token without a usable username claim is
 * refused rather than served under any other identity.
 */
export async function actingAs(c: Context, own: Client): Promise<Acting> {
  const p: Principal | undefined = c.get('principal');
  const self = { client: own, who: 'the API service account', own };
  if (!p || p.kind === 'anonymous') return self;
  if (p.actsAs) {
    const groups = await impersonableGroups(own).filter(p.actsAs.groups ?? []);
    const identity = { user: p.actsAs.user, groups };
    return { client: own.as(identity), who: `user "${identity.user}"`, own, identity };
  }
  if (p.kind === 'api-key') return self;
  throw httpError(
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
 * The API server's answer to "may `acting` do `r` in `namespace`?". About a user, a
 * LocalSubjectAccessReview made with the API's own account names the user and the groups it is
 * impersonated with (plus `system:authenticated`, which impersonation adds): no impersonation is
 * needed to ask, and the review cannot reach beyond the namespace. As itself, the API asks a
 * SelfSubjectAccessReview (every account may review itself).
 */
async function allowed(acting: Acting, namespace: string, r: Right): Promise<boolean> {
  const resourceAttributes = { verb: r.verb, resource: r.resource, namespace, name: r.name };
  const { identity } = acting;
  if (!identity) {
    const review = await acting.own.create(CoreKinds.SelfSubjectAccessReview, {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: { resourceAttributes },
    } as SelfSubjectAccessReview);
    return review.status?.allowed === true;
  }
  const groups = [...new Set([...(identity.groups ?? []), 'system:authenticated'])];
  const review = await acting.own.create(LocalSubjectAccessReviewRef, {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'LocalSubjectAccessReview',
    metadata: { namespace },
    spec: { user: identity.user, groups, resourceAttributes },
  });
  return review.status?.allowed === true;
}

/** Which of `rights` `acting` lacks in `namespace`, as labels; review failures propagate. */
export async function missingRights(acting: Acting, namespace: string, rights: readonly Right[]) {
  const answers = await Promise.all(
    rights.map(async (r) => ((await allowed(acting, namespace, r)) ? undefined : label(r))),
  );
  return answers.filter((a): a is string => a !== undefined);
}

/** A 403 naming what is missing, when any of `rights` is; SSAR failures propagate. */
export async function requireRights(acting: Acting, namespace: string, rights: readonly Right[]) {
  const missing = await missingRights(acting, namespace, rights);
  if (missing.length)
    throw httpError(
      'forbidden',
      `${acting.who} may not edit marketplace sources in namespace ${namespace}: missing ${missing.join(', ')}`,
    );
}
