import type { Client } from '../../kube/client/types.ts';
import { CoreKinds, type SelfSubjectAccessReview } from '../../kube/kinds.ts';

/** How long one answer is kept: an RBAC change reaches the API within this time. */
export const ANSWER_TTL_MS = 60_000;
/** Groups remembered at most (all forgotten at once past it: bounded, and simple). */
const MAX_ANSWERS = 1024;
/**
 * Groups of one identity considered at most. Tokens are signed by the issuer, yet a claim listing
 * thousands of groups must not cost thousands of reviews; dropping groups only ever removes rights.
 */
export const MAX_GROUPS = 64;

/**
 * Which groups the API's own account may impersonate, asked of the API server (a
 * SelfSubjectAccessReview of `impersonate groups/<name>`) and remembered briefly. The impersonation
 * component lists the groups by name (docs/install.md): a user's other groups are dropped rather
 * than failing the whole request, so the user acts with exactly the rights the listed groups give.
 */
export class ImpersonableGroups {
  readonly #own: Client;
  readonly #now: () => number;
  readonly #answers = new Map<string, { at: number; allowed: Promise<boolean> }>();

  constructor(own: Client, now: () => number = Date.now) {
    this.#own = own;
    this.#now = now;
  }

  /** `groups` without those the API may not impersonate, in their order, without duplicates. */
  async filter(groups: readonly string[]): Promise<string[]> {
    const unique = [...new Set(groups)].slice(0, MAX_GROUPS);
    const allowed = await Promise.all(unique.map((g) => this.#allowed(g)));
    return unique.filter((_, i) => allowed[i]);
  }

  #allowed(group: string): Promise<boolean> {
    const now = this.#now();
    const known = this.#answers.get(group);
    if (known && now - known.at < ANSWER_TTL_MS) return known.allowed;
    if (this.#answers.size >= MAX_ANSWERS) this.#answers.clear();
    const allowed = this.#ask(group);
    const entry = { at: now, allowed };
    this.#answers.set(group, entry);
    // A failed review is not an answer: the next request asks again.
    allowed.catch(() => {
      if (this.#answers.get(group) === entry) this.#answers.delete(group);
    });
    return allowed;
  }

  async #ask(group: string): Promise<boolean> {
    const review = await this.#own.create(CoreKinds.SelfSubjectAccessReview, {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: { resourceAttributes: { verb: 'impersonate', resource: 'groups', name: group } },
    } as SelfSubjectAccessReview);
    return review.status?.allowed === true;
  }
}

const perClient = new WeakMap<Client, ImpersonableGroups>();

/** The one ImpersonableGroups of an API client (one per API instance). */
export function impersonableGroups(own: Client): ImpersonableGroups {
  let gate = perClient.get(own);
  if (!gate) {
    gate = new ImpersonableGroups(own);
    perClient.set(own, gate);
  }
  return gate;
}
