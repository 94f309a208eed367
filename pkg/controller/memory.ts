import type { KubeConfig, KubernetesObject, V1Secret, V1Service } from '@kubernetes/client-node';
import type { Condition, Memory } from '../api/index.ts';
import type { InformerCache } from '../kube/cache.ts';
import type { ReconcileResult } from '../kube/controller.ts';
import { patchStatus } from '../kube/objects.ts';
import type { Logger } from '../log/index.ts';

export interface Resolution {
  phase: 'ready' | 'error';
  address?: string;
  reason: string;
  message: string;
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

/** Resolves a Memory's address from the cache: a URL as given, or a Service's cluster DNS name. */
export function resolveMemory(cache: InformerCache, m: Memory): Resolution {
  const ns = m.metadata.namespace ?? 'default';
  for (const h of m.spec.headers ?? []) {
    const ref = h.valueFrom?.secretKeyRef;
    if (!ref) continue;
    const secret = cache.get('secrets', ns, ref.name) as V1Secret | undefined;
    if (!secret) return fail('SecretNotFound', `header ${h.name}: Secret ${ns}/${ref.name} not found`);
    if (secret.data?.[ref.key] === undefined) {
      return fail('SecretKeyNotFound', `header ${h.name}: Secret ${ns}/${ref.name} has no key ${ref.key}`);
    }
  }
  const { value, valueFrom } = m.spec.address ?? {};
  if (value !== undefined) {
    const problem = checkUrl(value);
    if (problem) return fail('InvalidAddress', `spec.address.value ${JSON.stringify(value)}: ${problem}`);
    return { phase: 'ready', address: value, reason: 'Resolved', message: `address ${value}` };
  }
  const ref = valueFrom?.serviceRef;
  if (!ref) return fail('InvalidAddress', 'spec.address needs value or valueFrom.serviceRef');
  const svcNs = ref.namespace ?? ns;
  if (!cache.covers(svcNs)) {
    return fail(
      'ServiceNotWatched',
      `Service ${svcNs}/${ref.name} is outside the namespace the controller watches`,
    );
  }
  const svc = cache.get('services', svcNs, ref.name) as V1Service | undefined;
  if (!svc) return fail('ServiceNotFound', `Service ${svcNs}/${ref.name} not found`);
  const ports = svc.spec?.ports ?? [];
  if (!ports.some((p) => p.port === ref.port)) {
    const has = ports.map((p) => p.port).join(', ') || 'none';
    return fail(
      'ServicePortNotFound',
      `Service ${svcNs}/${ref.name} has no port ${ref.port} (ports: ${has})`,
    );
  }
  const path = ref.path ? (ref.path.startsWith('/') ? ref.path : `/${ref.path}`) : '';
  const address = `http://${ref.name}.${svcNs}.svc.cluster.local:${ref.port}${path}`;
  return {
    phase: 'ready',
    address,
    reason: 'Resolved',
    message: `address ${address} from Service ${svcNs}/${ref.name}`,
  };
}

/** Whether a Memory refers to the given Service or Secret (so its change re-enqueues the Memory). */
export function memoryRefers(m: Memory, plural: 'services' | 'secrets', obj: KubernetesObject): boolean {
  const ns = m.metadata.namespace ?? 'default';
  const objNs = obj.metadata?.namespace;
  const name = obj.metadata?.name;
  if (plural === 'services') {
    const ref = m.spec.address?.valueFrom?.serviceRef;
    return !!ref && ref.name === name && (ref.namespace ?? ns) === objNs;
  }
  return ns === objNs && !!m.spec.headers?.some((h) => h.valueFrom?.secretKeyRef?.name === name);
}

/** Sets status.lastResolvedAddress, phase ready|error, message and a Ready condition. */
export class MemoryReconciler {
  private readonly kc: KubeConfig;
  private readonly cache: InformerCache;
  private readonly logger: Logger;

  constructor(kc: KubeConfig, cache: InformerCache, logger: Logger) {
    this.kc = kc;
    this.cache = cache;
    this.logger = logger;
  }

  /** Keys of the Memories a Service or Secret change concerns. */
  keysFor(plural: 'services' | 'secrets', obj: KubernetesObject): string[] {
    return (this.cache.listAll('memories') as Memory[])
      .filter((m) => memoryRefers(m, plural, obj))
      .map((m) => `${m.metadata.namespace}/${m.metadata.name}`);
  }

  async reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | undefined> {
    const [ns = '', name = ''] = key.split('/');
    const m = this.cache.get('memories', ns, name) as Memory | undefined;
    if (!m || m.metadata.deletionTimestamp) return undefined;
    const r = resolveMemory(this.cache, m);
    const prev = m.status;
    const prevReady = prev?.conditions?.find((c) => c.type === 'Ready');
    const readyStatus = r.phase === 'ready' ? 'True' : 'False';
    const address = r.address ?? prev?.lastResolvedAddress;
    const unchanged =
      prev?.phase === r.phase &&
      prev?.lastResolvedAddress === address &&
      prev?.message === r.message &&
      prevReady?.status === readyStatus &&
      prevReady?.reason === r.reason &&
      prev?.observedGeneration === m.metadata.generation;
    if (unchanged) return undefined;
    const condition: Condition = {
      type: 'Ready',
      status: readyStatus,
      reason: r.reason,
      message: r.message,
      lastTransitionTime:
        prevReady?.status === readyStatus && prevReady.lastTransitionTime
          ? prevReady.lastTransitionTime
          : new Date().toISOString(),
      observedGeneration: m.metadata.generation,
    };
    await patchStatus(
      this.kc,
      'memories',
      m,
      {
        phase: r.phase,
        // The last good address is kept on error: the purge of existing queries may still reach it.
        lastResolvedAddress: address ?? null,
        message: r.message,
        conditions: [condition],
        observedGeneration: m.metadata.generation,
      },
      { signal },
    );
    this.logger.info(
      { memory: key, phase: r.phase, address: r.address, reason: r.reason },
      'memory resolved',
    );
    return undefined;
  }
}
