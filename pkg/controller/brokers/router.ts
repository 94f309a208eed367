/**
 * Which broker a namespace's query data goes to (issue 27): the namespace's own — the Service
 * `berth-broker` (port 80, else its first port) in it, found the way a Memory's serviceRef is —
 * else the configured broker (BROKER_URL), shared by every namespace without one. Services come
 * from the informer cache, so a broker added, moved or removed is seen at the next query.
 *
 * Credentials: the process's `berth-broker` token (BROKER_TOKEN_FILE) goes to the configured broker
 * only; a namespace's own broker gets a token minted for that namespace alone (tokens.ts), or none
 * when minting is off (a controller outside a pod).
 */
import type { V1Service } from '@kubernetes/client-node';
import type { BrokerRoute, BrokerRouter } from '../../engine/brokers.ts';
import type { BrokerCredentials } from '../../http/service-token/index.ts';
import { ignoreNotFound, type Reader } from '../../kube/client/index.ts';
import { CoreKinds, type KindRef } from '../../kube/kinds.ts';
import type { Logger } from '../../log/index.ts';
import { serviceHost } from '../address.ts';
import type { NamespaceTokens } from './tokens.ts';

const ServiceRef = CoreKinds.Service as KindRef<V1Service>;
export const TENANT_BROKER_SERVICE = 'berth-broker';
/** A failed mint is logged once per namespace per this long. */
const WARN_EVERY_MS = 60_000;

export interface NamespaceBrokersOptions {
  /** Reads Services (the informer cache). */
  reader: Reader;
  /** BROKER_URL and the namespace it is the own broker of (its queries' keys are bare names). */
  fallback?: { url: string; namespace: string | undefined };
  /** The process's token, sent to the fallback broker only. */
  credentials: BrokerCredentials;
  /** Mints each namespace's broker token; undefined: namespace brokers get no credential. */
  tokens?: NamespaceTokens;
  /** The name of a namespace's broker Service; default `berth-broker`. */
  serviceName?: string;
  /** The namespace the controller watches (Services elsewhere are not in the cache); all when absent. */
  watchNamespace?: string;
  logger: Logger;
}

export class NamespaceBrokers implements BrokerRouter {
  readonly #o: NamespaceBrokersOptions;
  readonly #fallback: BrokerRoute | undefined;
  readonly #routes = new Map<string, BrokerRoute>();
  readonly #warned = new Map<string, number>();

  constructor(o: NamespaceBrokersOptions) {
    this.#o = o;
    const f = o.fallback;
    const url = f?.url.replace(/\/+$/, '');
    this.#fallback =
      f && url ? { url, namespace: f.namespace, headers: () => o.credentials.headersFor(url) } : undefined;
  }

  async route(namespace: string): Promise<BrokerRoute | undefined> {
    const url = await this.#ownBroker(namespace);
    return url ? this.#routeOf(namespace, url) : this.#fallback;
  }

  /** `namespace`'s broker Service as a base URL; undefined when it has none (or is not watched). */
  async #ownBroker(namespace: string): Promise<string | undefined> {
    const w = this.#o.watchNamespace;
    if (w !== undefined && w !== namespace) return undefined;
    const name = this.#o.serviceName ?? TENANT_BROKER_SERVICE;
    const svc = await ignoreNotFound(this.#o.reader.get(ServiceRef, { namespace, name }));
    const ports = svc?.spec?.ports ?? [];
    const port = ports.find((p) => p.port === 80)?.port ?? ports[0]?.port;
    if (!svc || !port) return undefined;
    return new URL(`http://${serviceHost(svc, name, namespace)}:${port}`).origin;
  }

  async #routeOf(namespace: string, url: string): Promise<BrokerRoute> {
    // The configured broker reached through its Service (a query of its own namespace) stays it.
    if (this.#fallback && this.#o.credentials.isBroker(url)) return this.#fallback;
    const key = `${namespace} ${url}`;
    let route: BrokerRoute | undefined = this.#routes.get(key);
    if (!route) {
      const tokens = this.#o.tokens;
      route = {
        url,
        namespace,
        headers: (): Record<string, string> => {
          const token = tokens?.current(namespace);
          if (tokens && !token) void this.#mint(namespace);
          return token ? { authorization: `Bearer ${token}` } : {};
        },
      };
      // One entry per namespace: a moved broker replaces the old one.
      for (const k of this.#routes.keys()) if (k.startsWith(`${namespace} `)) this.#routes.delete(k);
      this.#routes.set(key, route);
    }
    await this.#mint(namespace);
    return route;
  }

  /** Makes sure a token for `namespace` is held; a failure is logged, the query goes on without one. */
  async #mint(namespace: string): Promise<void> {
    if (!this.#o.tokens) return;
    try {
      await this.#o.tokens.token(namespace);
    } catch (err) {
      const now = Date.now();
      if (now - (this.#warned.get(namespace) ?? 0) < WARN_EVERY_MS) return;
      this.#warned.set(namespace, now);
      this.#o.logger.warn(
        { namespace, error: err instanceof Error ? err.message : String(err) },
        "no token for the namespace's broker (TokenRequest failed): its writes are refused until one is minted",
      );
    }
  }
}
