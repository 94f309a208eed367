import type { KubernetesObject } from '@kubernetes/client-node';

/**
 * A typed reference to one kind of the API: the key of every client call, informer and cache
 * lookup. The type parameter is the object's TypeScript shape (phantom: never set at run time), so
 * `client.get(QueryRef, …)` returns a `Query` without a cast at the call site.
 */
export interface KindRef<T = KubernetesObject> {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
  /** Phantom field carrying the object type; never present on a value. */
  readonly __object?: T;
}

export function kindRef<T = KubernetesObject>(r: Omit<KindRef<T>, '__object'>): KindRef<T> {
  return Object.freeze({ ...r });
}

export const apiVersionOf = (r: KindRef<unknown>) => (r.group ? `${r.group}/${r.version}` : r.version);

/** `group/version` → its parts; a bare version is the core group (''). */
export function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** One resource of a group/version with the singular name discovery gives it (kubectl's lower-case Kind). */
export interface ResourceNames {
  ref: KindRef;
  singular: string;
}

/**
 * The resource `name` stands for, the way kubectl's RESTMapper reads a resource argument: its Kind,
 * plural or singular exactly, else any of them ignoring case (`Secrets`, `SECRETS`, `secret` are
 * all core `secrets`). Within one group/version these names are unique, so at most one resource
 * matches each; undefined when none does (never a guess).
 */
export function matchResource(list: readonly ResourceNames[], name: string): KindRef | undefined {
  const exact = list.find((r) => r.ref.kind === name || r.ref.plural === name || r.singular === name);
  if (exact) return exact.ref;
  const lower = name.toLowerCase();
  return list.find(
    (r) =>
      r.ref.kind.toLowerCase() === lower ||
      r.ref.plural.toLowerCase() === lower ||
      r.singular.toLowerCase() === lower,
  )?.ref;
}

/** `group/plural`: unique per resource within a cluster, the identity of a ref in maps. */
export const refKey = (r: KindRef<unknown>) => `${r.group}/${r.plural}`;

/** REST path of a collection (`name` absent) or of one object. */
export function resourcePath(r: KindRef<unknown>, namespace?: string, name?: string): string {
  const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  const ns = r.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `${base}${ns}/${r.plural}${name ? `/${encodeURIComponent(name)}` : ''}`;
}

const core = <T = KubernetesObject>(kind: string, plural: string, namespaced = true) =>
  kindRef<T>({ group: '', version: 'v1', kind, plural, namespaced });

/** Built-in kinds the platform uses; generic Kubernetes, so they live here and not with the CRDs. */
export const CoreKinds = {
  Secret: core('Secret', 'secrets'),
  ConfigMap: core('ConfigMap', 'configmaps'),
  Service: core('Service', 'services'),
  Event: core('Event', 'events'),
  Namespace: core('Namespace', 'namespaces', false),
  CustomResourceDefinition: kindRef({
    group: 'apiextensions.k8s.io',
    version: 'v1',
    kind: 'CustomResourceDefinition',
    plural: 'customresourcedefinitions',
    namespaced: false,
  }),
  Lease: kindRef({
    group: 'coordination.k8s.io',
    version: 'v1',
    kind: 'Lease',
    plural: 'leases',
    namespaced: true,
  }),
  // Created (never read back) to ask "may I …?" as whoever the client acts as.
  SelfSubjectAccessReview: kindRef<SelfSubjectAccessReview>({
    group: 'authorization.k8s.io',
    version: 'v1',
    kind: 'SelfSubjectAccessReview',
    plural: 'selfsubjectaccessreviews',
    namespaced: false,
  }),
} as const;

/** The question and answer of a SelfSubjectAccessReview (the fields the platform uses). */
export interface SelfSubjectAccessReview {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string };
  spec: {
    resourceAttributes: {
      verb: string;
      resource: string;
      group?: string;
      namespace?: string;
      name?: string;
      subresource?: string;
    };
  };
  status?: { allowed: boolean; denied?: boolean; reason?: string; evaluationError?: string };
}

/**
 * The kinds a process knows without discovery, like controller-runtime's Scheme: callers register
 * theirs (pkg/kube knows no Berth kind), lookups by apiVersion+kind or group+plural.
 */
export class Scheme {
  readonly #byKind = new Map<string, KindRef>();
  readonly #byPlural = new Map<string, KindRef>();

  constructor(...refs: KindRef<unknown>[][]) {
    this.add(...Object.values(CoreKinds));
    for (const list of refs) this.add(...list);
  }

  add(...refs: KindRef<unknown>[]): this {
    for (const r of refs) {
      this.#byKind.set(`${apiVersionOf(r)}/${r.kind}`, r as KindRef);
      this.#byPlural.set(refKey(r), r as KindRef);
    }
    return this;
  }

  byKind(apiVersion: string, kind: string): KindRef | undefined {
    return this.#byKind.get(`${apiVersion}/${kind}`);
  }

  byPlural(group: string, plural: string): KindRef | undefined {
    return this.#byPlural.get(`${group}/${plural}`);
  }

  /** A registered kind of `apiVersion` by Kind, plural or singular, as `matchResource` finds it. */
  find(apiVersion: string, name: string): KindRef | undefined {
    const { group, version } = splitApiVersion(apiVersion);
    const served = this.all().filter((r) => r.group === group && r.version === version);
    return matchResource(
      served.map((ref) => ({ ref, singular: ref.kind.toLowerCase() })),
      name,
    );
  }

  all(): KindRef[] {
    return [...this.#byPlural.values()];
  }
}
