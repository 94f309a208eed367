import type { V1Secret } from '@kubernetes/client-node';
import { Agent, fetch as undiciFetch } from 'undici';
import { DEFAULT_MEMORY_NAME, Kinds, type Memory, type Query } from '../../api/index.ts';
import {
  type BrokerRoute,
  type BrokerRouter,
  isRouteBroker,
  singleBrokerRouter,
} from '../../engine/brokers.ts';
import { linkSignals } from '../../http/index.ts';
import { clusterAddressRule, guardedConnector } from '../../http/outbound/index.ts';
import { brokerCredentials } from '../../http/service-token/index.ts';
import { ignoreNotFound, type Reader } from '../../kube/client/index.ts';
import { CoreKinds, type KindRef } from '../../kube/kinds.ts';
import { engineSecretValue } from '../lookup.ts';

const SecretRef = CoreKinds.Secret as KindRef<V1Secret>;

export interface PurgeDeps {
  /** Reads the Memory and its header Secrets (the cache in a controller). */
  reader: Reader;
  /** The broker of each namespace (the engine's router), with its credential. */
  brokers?: BrokerRouter;
  /** Without `brokers`: one broker for every namespace (its token from BROKER_TOKEN_FILE). */
  brokerUrl?: string;
  /** Per-request timeout. */
  timeoutMs: number;
  fetch?: typeof fetch;
}

const routers = new Map<string, BrokerRouter>();

let guarded: typeof fetch | undefined;
/**
 * The purge's default HTTP client: every connection through the engine's address rule, since the
 * addresses it calls (a Memory's, a namespace's broker Service, an ExternalName) are a tenant's to
 * write: never cloud metadata or link-local.
 */
function guardedFetch(): typeof fetch {
  if (!guarded) {
    const dispatcher = new Agent({ connect: guardedConnector(clusterAddressRule) });
    guarded = ((url: string | URL, init?: RequestInit) =>
      undiciFetch(url, { ...(init as object), dispatcher } as never)) as unknown as typeof fetch;
  }
  return guarded;
}

/** The query's namespace's broker; undefined when none is configured. */
function routeOf(deps: PurgeDeps, namespace: string): Promise<BrokerRoute | undefined> {
  if (deps.brokers) return deps.brokers.route(namespace);
  if (!deps.brokerUrl) return Promise.resolve(undefined);
  let router = routers.get(deps.brokerUrl);
  if (!router) {
    const env = process.env;
    const home = env.BROKER_NAMESPACE || env.POD_NAMESPACE || undefined;
    router = singleBrokerRouter(deps.brokerUrl, home, brokerCredentials([deps.brokerUrl]));
    routers.set(deps.brokerUrl, router);
  }
  return router.route(namespace);
}

/**
 * Whether `route` is a broker other namespaces' Queries share with this one's: the configured broker
 * of another namespace. Same-named Queries have the same id there, so a purge keeps to this
 * namespace's data. (A broker with no namespace of its own — `berth up`, a controller run by hand —
 * is one user's: its purges go by name, as the wire convention has them.)
 */
const sharedWithOthers = (route: BrokerRoute | undefined, namespace: string) =>
  route?.namespace !== undefined && route.namespace !== namespace;

/** The broker's Authorization when `url` is the query's broker (never a third-party Memory), unless one is set. */
function withBrokerAuth(route: BrokerRoute | undefined, url: string, headers: Record<string, string>) {
  if (!route || !isRouteBroker(route, url)) return headers;
  if (Object.keys(headers).some((k) => k.toLowerCase() === 'authorization')) return headers;
  return { ...headers, ...route.headers() };
}

/** One part of a query's broker data; `error` says why it could not be purged (yet). */
export interface PurgeStep {
  done: boolean;
  /** What was (or was to be) purged, for logs and the Warning event. */
  target: string;
  error?: string;
}

async function memoryHeaders(deps: PurgeDeps, memory: Memory, namespace: string) {
  const headers: Record<string, string> = {};
  for (const h of memory.spec.headers ?? []) {
    if (h.value !== undefined) headers[h.name] = h.value;
    const ref = h.valueFrom?.secretKeyRef;
    if (ref) {
      const secret = await ignoreNotFound(deps.reader.get(SecretRef, { namespace, name: ref.name }));
      // The purge sends the value to the Memory's address: the same opt-in as the engine's calls.
      const v = engineSecretValue(secret, ref.key);
      if (v === undefined) throw new Error(`header ${h.name}: secret ${ref.name} key ${ref.key} not found`);
      headers[h.name] = v;
    }
  }
  return headers;
}

/**
 * The same key for every attempt at one Query's purge of one domain — by this leader or by the
 * next after a crash — so a backend that honours `Idempotency-Key` (the Berth broker) runs it once.
 */
function purgeKey(q: Query, domain: 'messages' | 'events'): Record<string, string> {
  return { 'idempotency-key': `berth-purge-${q.metadata.uid ?? q.metadata.name}-${domain}` };
}

async function del(
  deps: PurgeDeps,
  route: BrokerRoute | undefined,
  url: string,
  headers: Record<string, string>,
  signal: AbortSignal,
  doneStatuses: number[],
): Promise<string | undefined> {
  // Linked, not AbortSignal.any(): `signal` lives as long as the controller (pkg/http/abort).
  const linked = linkSignals(signal, AbortSignal.timeout(deps.timeoutMs));
  try {
    // The Memory's headers (values from Secrets) go to its address only: a redirect is not followed
    // (fetch would carry every header but Authorization to wherever it points).
    const res = await (deps.fetch ?? guardedFetch())(url, {
      method: 'DELETE',
      headers: withBrokerAuth(route, url, headers),
      signal: linked.signal,
      redirect: 'manual',
    });
    await res.body?.cancel();
    if (res.ok || doneStatuses.includes(res.status)) return undefined;
    if (res.status >= 300 && res.status < 400) return `HTTP ${res.status} (redirects are not followed)`;
    return `HTTP ${res.status}`;
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    return e.cause?.code ?? e.cause?.message ?? e.message;
  } finally {
    linked.dispose();
  }
}

/**
 * Messages are purged through the Query's Memory (spec.memory, else the namespace's Memory
 * `default`; neither → nothing to purge). 404 and 405 mean the backend has no purge: done.
 */
export async function purgeMessages(deps: PurgeDeps, q: Query, signal: AbortSignal): Promise<PurgeStep> {
  const ns = q.metadata.namespace ?? 'default';
  const name = q.spec.memory?.name ?? DEFAULT_MEMORY_NAME;
  const memory = await ignoreNotFound(deps.reader.get(Kinds.Memory, { namespace: ns, name }));
  if (!memory) return { done: true, target: `messages: no Memory ${name} in ${ns}, nothing to purge` };
  const addr = memory.status?.lastResolvedAddress;
  const target = `messages via Memory ${name}${addr ? ` (${addr})` : ''}`;
  if (!addr) return { done: false, target, error: `Memory ${name} has no resolved address` };
  let headers: Record<string, string>;
  try {
    headers = await memoryHeaders(deps, memory, ns);
  } catch (err) {
    return { done: false, target, error: (err as Error).message };
  }
  let route: BrokerRoute | undefined;
  try {
    route = await routeOf(deps, ns);
  } catch (err) {
    return { done: false, target, error: `no broker route: ${(err as Error).message}` };
  }
  const qname = encodeURIComponent(q.metadata.name);
  const base = addr.replace(/\/+$/, '');
  let url = `${base}/queries/${qname}/messages`;
  if (isRouteBroker(route, addr) && sharedWithOthers(route, ns)) {
    // A broker other namespaces share: only this Query's messages in its own conversation.
    const conversation = q.status?.conversationId;
    if (!conversation) return { done: true, target: `${target}: no conversation, nothing stored` };
    url = `${base}/conversations/${encodeURIComponent(conversation)}/queries/${qname}/messages`;
  }
  const error = await del(deps, route, url, { ...headers, ...purgeKey(q, 'messages') }, signal, [404, 405]);
  return error ? { done: false, target, error } : { done: true, target };
}

/** Events are purged on the broker of the query's namespace; without one there is nothing to purge. */
export async function purgeEvents(deps: PurgeDeps, q: Query, signal: AbortSignal): Promise<PurgeStep> {
  const ns = q.metadata.namespace ?? 'default';
  let route: BrokerRoute | undefined;
  try {
    route = await routeOf(deps, ns);
  } catch (err) {
    return { done: false, target: 'events', error: `no broker route: ${(err as Error).message}` };
  }
  if (!route) return { done: true, target: 'events: no broker configured' };
  const target = `events at broker ${route.url}`;
  // In a broker other namespaces share, only this namespace's Query's events (data.queryNamespace).
  const scope = sharedWithOthers(route, ns) ? `?namespace=${encodeURIComponent(ns)}` : '';
  const url = `${route.url}/events/${encodeURIComponent(q.metadata.name)}${scope}`;
  const error = await del(deps, route, url, purgeKey(q, 'events'), signal, [404]);
  return error ? { done: false, target, error } : { done: true, target };
}
