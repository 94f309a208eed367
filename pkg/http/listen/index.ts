import type { Server } from 'node:http';
import { type AddressInfo, BlockList, isIP } from 'node:net';
import type { ProbeResponder } from '../health/socket.ts';
import { type Fetch, lazyRequestListener } from './adapter.ts';

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
    // Taken at use: a server that never asks does not load the resolver module.
    const all = await process.getBuiltinModule('node:dns/promises').lookup(h, { all: true });
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

export interface Listening {
  server: Server;
  /** The port bound: the one asked for, or the free one picked for 0. */
  port: number;
  /** `http://<host>:<port>` as this machine reaches it (`urlHost`), without a trailing slash. */
  url: string;
  /** Ends every connection, idle or busy (no grace: see Drain for that), then closes the server. */
  close(): Promise<void>;
}

export interface ListenOptions {
  port: number;
  host?: string;
  /** Probes answered on the socket, before the app (`answerProbes`): they never load the app's pipeline. */
  probes?: ProbeResponder;
}

/**
 * Serves `fetch` (a Hono app's) on `host` (default loopback: reachable from this machine only) and
 * `port` (0: any free port), and resolves once it listens — rejecting with the listen error
 * (EADDRINUSE, EACCES) rather than handing back a server that never bound.
 *
 * The Node adapter is loaded by the first request that is not a probe (`lazyRequestListener`).
 * `node:http` is taken with `getBuiltinModule`: importing it as an ES module reads its lazy
 * `WebSocket`/`MessageEvent` exports, which load Node's fetch implementation (undici) — what an
 * idle broker that only answers probes does without (docs/broker.md "Footprint").
 */
export async function listenHttp(fetch: Fetch, opts: ListenOptions): Promise<Listening> {
  const host = opts.host ?? LOOPBACK_HOST;
  const http = process.getBuiltinModule('node:http');
  const app = lazyRequestListener(fetch, host);
  const probes = opts.probes;
  const server = http.createServer(probes ? (req, res) => probes(req, res) || app(req, res) : app);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', () => resolve());
    server.once('error', reject);
    server.listen(opts.port, host);
  });
  const { port } = server.address() as AddressInfo;
  return {
    server,
    port,
    url: `http://${urlHost(host)}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
