/**
 * The request-forgery guard's machinery, shared by every outbound client: an address rule, the
 * socket-level name resolution that applies it (so the addresses checked are the addresses
 * connected to — no DNS rebinding between check and connect), and an undici connector that
 * applies it to every connection, IP literals and redirect hops included. The marketplace uses it
 * with its strict rule (public addresses only); the engine with the cluster rule below.
 */
import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import ipaddr from 'ipaddr.js';
import { buildConnector } from 'undici';

/** Name resolution, replaceable in tests (a name that resolves to loopback, rebinding). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

// The resolver module is taken at use: a process that never connects out does not load it.
export const systemResolver: Resolver = (hostname) =>
  process.getBuiltinModule('node:dns/promises').lookup(hostname, { all: true });

/** Why `address` may not be connected to; undefined when it may. */
export type AddressRule = (address: string) => string | undefined;

/** A refusal of the guard: carried through the socket's error to the caller. */
export class AddressRefused extends Error {
  readonly address: string;

  constructor(hostname: string, address: string, message: string) {
    super(hostname === address ? message : `${hostname} resolves to ${address}: ${message}`);
    this.name = 'AddressRefused';
    this.address = address;
  }
}

/** The AddressRefused somewhere in an error's cause chain (undici wraps connect failures). */
export function refusalIn(err: unknown): AddressRefused | undefined {
  for (let e = err, depth = 0; e && depth < 8; depth++) {
    if (e instanceof AddressRefused) return e;
    if (e instanceof AggregateError)
      for (const inner of e.errors) {
        const found = refusalIn(inner);
        if (found) return found;
      }
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

type LookupCallback = (err: Error | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A socket `lookup` that resolves with `resolve` and applies `rule` to every answer: one refused
 * address refuses the name.
 */
export function guardedLookup(resolve: Resolver, rule: AddressRule) {
  return (hostname: string, options: { all?: boolean; family?: number | string }, cb: LookupCallback) => {
    resolve(hostname).then(
      (found) => {
        for (const a of found) {
          const why = rule(a.address);
          if (why) return cb(new AddressRefused(hostname, a.address, why), []);
        }
        const family = Number(options.family) || 0;
        const usable = family ? found.filter((a) => a.family === family) : found;
        const first = usable[0];
        if (!first)
          return cb(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
        return options.all ? cb(null, usable) : cb(null, first.address, first.family);
      },
      (err: Error) => cb(err, []),
    );
  };
}

/**
 * An undici connector applying `rule` to every connection its Agent makes: an IP literal is judged
 * before connecting (a literal never reaches a lookup), a name inside the socket's lookup. Since
 * it sits under the Agent, a redirect hop meets it like the first request.
 */
export function guardedConnector(
  rule: AddressRule,
  opts: { resolve?: Resolver; tls?: ConnectionOptions } = {},
): buildConnector.connector {
  const connect = buildConnector({
    ...opts.tls,
    lookup: guardedLookup(opts.resolve ?? systemResolver, rule) as never,
  });
  return (options, cb) => {
    const host = options.hostname.startsWith('[') ? options.hostname.slice(1, -1) : options.hostname;
    const why = isIP(host) ? rule(host) : undefined;
    if (why) return cb(new AddressRefused(host, host, why), null);
    return connect(options, cb);
  };
}

/** Cloud metadata services outside the link-local range (Alibaba Cloud; AWS over IPv6). */
const METADATA_ADDRESSES = new Set(['100.100.100.200', 'fd00:ec2::254']);
const NEVER_A_SERVICE = new Set(['linkLocal', 'unspecified', 'broadcast', 'multicast', 'reserved']);

/**
 * The rule of the clients that call addresses written in custom resources from inside the cluster
 * (the engine: Models, Memories, Tools, Evaluators). In-cluster services live on private and
 * loopback addresses, so those are allowed by design; what is refused has no service behind it a
 * resource could mean: link-local (cloud metadata 169.254.169.254, fe80::/10), the other metadata
 * addresses, unspecified, broadcast, multicast and reserved ranges. IPv4-mapped IPv6 is judged as
 * the IPv4 address it carries.
 */
export const clusterAddressRule: AddressRule = (address) => {
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
  const ip = ipaddr.process(address);
  if (METADATA_ADDRESSES.has(ip.toString()) || NEVER_A_SERVICE.has(ip.range()))
    return `the address ${address} is not allowed: link-local, cloud metadata, unspecified, broadcast, multicast and reserved addresses are never called`;
  return undefined;
};
