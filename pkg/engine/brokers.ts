/**
 * Where a Query's broker data goes: the seam between the engine and whoever knows the cluster's
 * brokers. The controller routes each namespace to its own broker (pkg/controller/brokers); without
 * a router every namespace goes to the one configured broker (`berth up`, a controller run by hand).
 */
import { type BrokerCredentials, brokerOrigins } from '../http/service-token/index.ts';

export interface BrokerRoute {
  /** Base URL, without a trailing slash. */
  url: string;
  /** The namespace this broker belongs to (for its Service's short and long cluster names). */
  namespace: string | undefined;
  /** `{authorization}` for this broker, `{}` without a credential. Only ever sent to `url`'s broker. */
  headers(): Record<string, string>;
}

export interface BrokerRouter {
  /** The broker of `namespace`'s data; undefined: none configured, nothing is recorded. */
  route(namespace: string): Promise<BrokerRoute | undefined>;
}

/** Whether `url` is `route`'s broker (its origin, or the same Service under another cluster name). */
export function isRouteBroker(route: BrokerRoute | undefined, url: string | URL): boolean {
  if (!route) return false;
  let origin: string;
  try {
    const u = new URL(url);
    origin = `${u.protocol}//${u.host}`;
  } catch {
    return false;
  }
  return brokerOrigins(route.url, route.namespace).includes(origin);
}

/** The route's credential for a request to `url` when it is that broker; `{}` for any other address. */
export const routeHeadersFor = (route: BrokerRoute | undefined, url: string | URL) =>
  route && isRouteBroker(route, url) ? route.headers() : {};

/** Every namespace to the one configured broker (in `namespace`), with the process's broker token (BROKER_TOKEN_FILE). */
export function singleBrokerRouter(
  url: string | undefined,
  namespace: string | undefined,
  credentials: BrokerCredentials,
): BrokerRouter {
  const base = url?.replace(/\/+$/, '') || undefined;
  const route: BrokerRoute | undefined = base
    ? { url: base, namespace, headers: () => credentials.headersFor(base) }
    : undefined;
  return { route: async () => route };
}
