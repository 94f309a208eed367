import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/** Where a local run listens unless told otherwise: reachable from this machine only. */
export const LOOPBACK_HOST = '127.0.0.1';

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');
loopback.addSubnet('::ffff:127.0.0.0', 104, 'ipv6');

const bare = (host: string) => (host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host);

function isLoopbackAddress(address: string): boolean {
  const family = isIP(address);
  return family !== 0 && loopback.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/**
 * Whether a listen host keeps a server on this machine: a loopback address, or a name that
 * resolves to loopback addresses only (`localhost`). The unspecified addresses (`0.0.0.0`, `::`)
 * and everything else reach beyond it. A name that does not resolve is treated as reaching beyond.
 */
export async function isLoopbackHost(host: string): Promise<boolean> {
  const h = bare(host);
  if (isIP(h)) return isLoopbackAddress(h);
  try {
    const all = await lookup(h, { all: true });
    return all.length > 0 && all.every((a) => isLoopbackAddress(a.address));
  } catch {
    return false;
  }
}

/**
 * The host to put in a URL for a server listening on `host`: the unspecified addresses become
 * 127.0.0.1 (always reachable from here), an IPv6 literal gets its brackets.
 */
export function urlHost(host: string | undefined): string {
  const h = bare(host ?? LOOPBACK_HOST);
  if (h === '' || h === '0.0.0.0' || h === '::') return LOOPBACK_HOST;
  return isIP(h) === 6 ? `[${h}]` : h;
}
