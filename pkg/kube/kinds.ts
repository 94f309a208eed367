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

  all(): KindRef[] {
    return [...this.#byPlural.values()];
  }
}
