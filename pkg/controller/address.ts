/**
 * Address resolution shared by the kinds that point at an HTTP service with `spec.address` (value or
 * in-cluster serviceRef) and optional header Secrets: Memory and Evaluator. The resolution goes to
 * `status.lastResolvedAddress` with phase ready|error, a message and a Ready condition.
 */
import type { KubernetesObject, V1Secret, V1Service } from '@kubernetes/client-node';
import { type Condition, engineUseProblem, type Memory } from '../api/index.ts';
import { type Client, ignoreNotFound, patchStatus, type Reader } from '../kube/client/index.ts';
import type { ReconcileContext, ReconcileResult, Reconciler, Request } from '../kube/controller.ts';
import { CoreKinds, type KindRef } from '../kube/kinds.ts';

const SecretRef = CoreKinds.Secret as KindRef<V1Secret>;
const ServiceRef = CoreKinds.Service as KindRef<V1Service>;

/** An object with an address to resolve: a Memory or an Evaluator. */
export interface Addressed {
  metadata: { name: string; namespace?: string; generation?: number; deletionTimestamp?: string };
  spec: Pick<Memory['spec'], 'address' | 'headers'>;
  status?: {
    phase?: string;
    lastResolvedAddress?: string;
    message?: string;
    conditions?: Condition[];
    observedGeneration?: number;
  };
}

export interface Resolution {
  phase: 'ready' | 'error';
  address?: string;
  reason: string;
  message: string;
}

/** Where the Reader can look: Services outside the watched namespace are not in the cache. */
export interface ResolveScope {
  reader: Reader;
  /** The namespace the controller watches; all when absent. */
  watchNamespace?: string;
}

const fail = (reason: string, message: string): Resolution => ({ phase: 'error', reason, message });

function checkUrl(value: string): string | undefined {
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:' ? undefined : `unsupported scheme ${u.protocol}`;
  } catch {
    return 'not an absolute URL';
  }
}

/**
 * The first header whose Secret or key is missing, or whose Secret the engine may not use (no
 * opt-in label), as an error; undefined when all resolve.
 */
async function checkHeaders(scope: ResolveScope, o: Addressed, ns: string): Promise<Resolution | undefined> {
  for (const h of o.spec.headers ?? []) {
    const ref = h.valueFrom?.secretKeyRef;
    if (!ref) continue;
    const secret = await ignoreNotFound(scope.reader.get(SecretRef, { namespace: ns, name: ref.name }));
    if (!secret) return fail('SecretNotFound', `header ${h.name}: Secret ${ns}/${ref.name} not found`);
    const problem = engineUseProblem(secret);
    if (problem) return fail('SecretNotUsable', `header ${h.name}: ${problem}`);
    if (secret.data?.[ref.key] === undefined) {
      return fail('SecretKeyNotFound', `header ${h.name}: Secret ${ns}/${ref.name} has no key ${ref.key}`);
    }
  }
  return undefined;
}

/**
 * The host a Service is reached at: its cluster DNS name, or for an ExternalName Service the name it
 * aliases (the cluster DNS answers a CNAME to it: the same place, and reachable from outside the
 * cluster, where the controller may run).
 */
export function serviceHost(svc: V1Service, name: string, namespace: string): string {
  const external = svc.spec?.type === 'ExternalName' ? svc.spec.externalName?.replace(/\.$/, '') : undefined;
  return external || `${name}.${namespace}.svc.cluster.local`;
}

type ServiceRefSpec = NonNullable<NonNullable<Memory['spec']['address']['valueFrom']>['serviceRef']>;

/** A Service ref as its cluster DNS name, once the Service and port exist. */
async function resolveService(scope: ResolveScope, ref: ServiceRefSpec, ns: string): Promise<Resolution> {
  const svcNs = ref.namespace ?? ns;
  const what = `Service ${svcNs}/${ref.name}`;
  if (scope.watchNamespace !== undefined && scope.watchNamespace !== svcNs) {
    return fail('ServiceNotWatched', `${what} is outside the namespace the controller watches`);
  }
  const svc = await ignoreNotFound(scope.reader.get(ServiceRef, { namespace: svcNs, name: ref.name }));
  if (!svc) return fail('ServiceNotFound', `${what} not found`);
  const ports = svc.spec?.ports ?? [];
  if (!ports.some((p) => p.port === ref.port)) {
    const has = ports.map((p) => p.port).join(', ') || 'none';
    return fail('ServicePortNotFound', `${what} has no port ${ref.port} (ports: ${has})`);
  }
  const path = ref.path ? (ref.path.startsWith('/') ? ref.path : `/${ref.path}`) : '';
  const address = `http://${serviceHost(svc, ref.name, svcNs)}:${ref.port}${path}`;
  return { phase: 'ready', address, reason: 'Resolved', message: `address ${address} from ${what}` };
}

/** Resolves an address: a URL as given, or a Service's cluster DNS name; header Secrets must exist. */
export async function resolveAddress(scope: ResolveScope, o: Addressed): Promise<Resolution> {
  const ns = o.metadata.namespace ?? 'default';
  const headerProblem = await checkHeaders(scope, o, ns);
  if (headerProblem) return headerProblem;
  const { value, valueFrom } = o.spec.address ?? {};
  if (value !== undefined) {
    const problem = checkUrl(value);
    if (problem) return fail('InvalidAddress', `spec.address.value ${JSON.stringify(value)}: ${problem}`);
    return { phase: 'ready', address: value, reason: 'Resolved', message: `address ${value}` };
  }
  const ref = valueFrom?.serviceRef;
  if (!ref) return fail('InvalidAddress', 'spec.address needs value or valueFrom.serviceRef');
  return resolveService(scope, ref, ns);
}

/** Whether an object refers to the given Service or Secret (so its change re-enqueues the object). */
export function addressRefers(o: Addressed, kind: 'Service' | 'Secret', obj: KubernetesObject): boolean {
  const ns = o.metadata.namespace ?? 'default';
  const objNs = obj.metadata?.namespace;
  const name = obj.metadata?.name;
  if (kind === 'Service') {
    const ref = o.spec.address?.valueFrom?.serviceRef;
    return !!ref && ref.name === name && (ref.namespace ?? ns) === objNs;
  }
  return ns === objNs && !!o.spec.headers?.some((h) => h.valueFrom?.secretKeyRef?.name === name);
}

/** The status a resolution asks for; undefined when the object already has it (no write). */
export function addressStatus(o: Addressed, r: Resolution, now: Date): Record<string, unknown> | undefined {
  const prev = o.status;
  const prevReady = prev?.conditions?.find((c) => c.type === 'Ready');
  const readyStatus = r.phase === 'ready' ? 'True' : 'False';
  // The last good address is kept on error: the purge of existing queries may still reach it.
  const address = r.address ?? prev?.lastResolvedAddress;
  const unchanged =
    prev?.phase === r.phase &&
    prev?.lastResolvedAddress === address &&
    prev?.message === r.message &&
    prevReady?.status === readyStatus &&
    prevReady?.reason === r.reason &&
    prev?.observedGeneration === o.metadata.generation;
  if (unchanged) return undefined;
  const sameStatus = prevReady?.status === readyStatus && prevReady.lastTransitionTime;
  const condition: Condition = {
    type: 'Ready',
    status: readyStatus,
    reason: r.reason,
    message: r.message,
    lastTransitionTime: sameStatus ? prevReady.lastTransitionTime : now.toISOString(),
    observedGeneration: o.metadata.generation,
  };
  return {
    phase: r.phase,
    lastResolvedAddress: address ?? null,
    message: r.message,
    conditions: [condition],
    observedGeneration: o.metadata.generation,
  };
}

/** Sets status.lastResolvedAddress, phase ready|error, message and a Ready condition of one kind. */
export class AddressReconciler<T extends Addressed> implements Reconciler {
  private readonly client: Client;
  private readonly ref: KindRef<T>;
  private readonly watchNamespace: string | undefined;

  constructor(client: Client, ref: KindRef<T>, watchNamespace?: string) {
    this.client = client;
    this.ref = ref;
    this.watchNamespace = watchNamespace;
  }

  /** Requests of the objects a Service or Secret change concerns. */
  async requestsFor(kind: 'Service' | 'Secret', obj: KubernetesObject): Promise<Request[]> {
    // A Service may serve objects of any namespace; a Secret only its own namespace's.
    const namespace = kind === 'Secret' ? obj.metadata?.namespace : this.watchNamespace;
    const { items } = await this.client.list(this.ref, namespace ? { namespace } : {});
    return items
      .filter((o) => addressRefers(o, kind, obj))
      .map((o) => ({ namespace: o.metadata.namespace ?? '', name: o.metadata.name }));
  }

  async reconcile(req: Request, ctx: ReconcileContext): Promise<ReconcileResult | undefined> {
    const o = await ignoreNotFound(this.client.get(this.ref, req, { signal: ctx.signal }));
    if (!o || o.metadata.deletionTimestamp) return undefined;
    const r = await resolveAddress({ reader: this.client, watchNamespace: this.watchNamespace }, o);
    const status = addressStatus(o, r, new Date());
    if (!status) return undefined;
    await patchStatus(this.client, this.ref, o, status, { signal: ctx.signal });
    ctx.logger.info(
      { kind: this.ref.kind, phase: r.phase, address: r.address, reason: r.reason },
      'address resolved',
    );
    return undefined;
  }
}
