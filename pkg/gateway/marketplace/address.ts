import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * The request-forgery guard's address rule: only globally routable unicast addresses may be
 * fetched. ipaddr.js classifies (`range()`); everything it names — loopback, private, link-local
 * (cloud metadata 169.254.169.254), unique-local (fd00:ec2::254), multicast, CGNAT (100.100.100.200),
 * unspecified, broadcast, reserved, documentation, NAT64/6to4/Teredo (which embed IPv4 addresses) —
 * is refused. An allow-list of one range, not a block-list, so a range nobody thought of is refused.
 * IPv4-mapped IPv6 (`::ffff:127.0.0.1`) is judged as the IPv4 address it carries.
 */
export function addressAllowed(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  return ipaddr.process(address).range() === 'unicast';
}

/** The URL's host as an address when it is an IP literal (`[::1]` → `::1`), else undefined. */
export function ipLiteral(url: URL): string | undefined {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return isIP(host) ? host : undefined;
}

/** `host:port` of a URL, as MARKETPLACE_ALLOWED_HOSTS lists it (the scheme's port when none is given). */
export function hostKey(url: URL): string {
  return `${url.hostname.toLowerCase()}:${url.port || (url.protocol === 'http:' ? '80' : '443')}`;
}

/**
 * MARKETPLACE_ALLOWED_HOSTS: a comma list of `host:port` the guard lets through whatever they
 * resolve to (an in-cluster catalogue, a test server). `[::1]:8443` for IPv6. Entries are matched
 * exactly — no wildcards — so an exemption never grows beyond what was written.
 */
export function parseAllowedHosts(value: string | undefined): Set<string> {
  const out = new Set<string>();
  for (const raw of (value ?? '').split(',')) {
    const entry = raw.trim();
    if (!entry) continue;
    let url: URL;
    try {
      url = new URL(`https://${entry}`);
    } catch {
      throw new Error(`MARKETPLACE_ALLOWED_HOSTS: "${entry}" is not host:port`);
    }
    if (!url.port && !/:443$/.test(entry))
      throw new Error(`MARKETPLACE_ALLOWED_HOSTS: "${entry}" needs a port (host:port)`);
    out.add(hostKey(url));
  }
  return out;
}

export interface UrlProblem {
  code: 'invalid_url' | 'address_not_allowed';
  message: string;
}

/**
 * Why a URL may not be used as a source, judged without resolving it (a name is judged at every
 * fetch, where resolving it means something); undefined when it may.
 */
export function urlProblem(url: string, allowed: ReadonlySet<string>): UrlProblem | undefined {
  const invalid = (message: string): UrlProblem => ({ code: 'invalid_url', message });
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return invalid('url must be an absolute https URL');
  }
  if (parsed.protocol !== 'https:')
    return invalid(`url must be an absolute https URL, not ${parsed.protocol}`);
  if (parsed.username || parsed.password)
    return invalid('url must not carry credentials; give them as auth.credential');
  const literal = ipLiteral(parsed);
  if (literal && !allowed.has(hostKey(parsed)) && !addressAllowed(literal))
    return { code: 'address_not_allowed', message: notAllowed(literal) };
  return undefined;
}

export const notAllowed = (address: string) =>
  `the address ${address} is not allowed: the request-forgery guard refuses loopback, private, link-local, metadata, multicast, CGNAT and unspecified addresses`;
