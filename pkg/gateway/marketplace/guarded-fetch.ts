import { rootCertificates } from 'node:tls';
import { Agent, request } from 'undici';
import { type Resolver, guardedLookup as ruledLookup, systemResolver } from '../../http/outbound/index.ts';
import { addressAllowed, hostKey, ipLiteral, notAllowed } from './address.ts';
import { FetchFailure, refusalIn } from './fetch-failure.ts';

export { type Resolver, systemResolver };

export interface GuardedFetcherOptions {
  /** MARKETPLACE_ALLOWED_HOSTS: `host:port` exempt from the address rule (never from https). */
  allowedHosts: ReadonlySet<string>;
  /** CAs trusted besides the system's (a test CA; in a cluster, NODE_EXTRA_CA_CERTS does this). */
  ca?: string[];
  resolve?: Resolver;
  /** Largest body read (a manifest larger than this is a parse_error, not memory spent). */
  maxBytes: number;
}

export interface RawAnswer {
  status: number;
  location?: string;
  body: string;
}

/**
 * The guard's resolution step, as the socket's own `lookup` (pkg/http/outbound) with the
 * marketplace's rule: the addresses it checks are the very addresses the connection then uses, so
 * a name that answers a public address to a check and a private one to the connection (DNS
 * rebinding) cannot slip between the two. Every address must pass: one refused address refuses
 * the name.
 */
export function guardedLookup(resolve: Resolver) {
  return ruledLookup(resolve, (address) => (addressAllowed(address) ? undefined : notAllowed(address)));
}

/**
 * GET over https through the request-forgery guard. Redirects are returned, never followed here
 * (the caller decides per hop, so every hop meets the guard again). IP-literal hosts never reach
 * a lookup, so they are judged before connecting; names are judged inside the socket's lookup.
 */
export class GuardedFetcher {
  readonly #o: GuardedFetcherOptions;
  readonly #guarded: Agent;
  readonly #exempt: Agent;

  constructor(o: GuardedFetcherOptions) {
    this.#o = o;
    const tls = o.ca?.length ? { ca: [...rootCertificates, ...o.ca] } : {};
    const lookup = guardedLookup(o.resolve ?? systemResolver);
    this.#guarded = new Agent({ connect: { ...tls, lookup: lookup as never } });
    this.#exempt = new Agent({ connect: tls });
  }

  async get(url: URL, headers: Record<string, string>, signal: AbortSignal): Promise<RawAnswer> {
    if (url.protocol !== 'https:')
      throw new FetchFailure('network_error', `refused ${url.protocol} URL: only https is fetched`);
    const exempt = this.#o.allowedHosts.has(hostKey(url));
    const literal = ipLiteral(url);
    if (!exempt && literal && !addressAllowed(literal))
      throw new FetchFailure('network_error', notAllowed(literal));
    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(url, {
        method: 'GET',
        headers,
        signal,
        dispatcher: exempt ? this.#exempt : this.#guarded,
      });
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      throw networkFailure(err);
    }
    const location = res.headers.location;
    if (res.statusCode < 200 || res.statusCode >= 300) {
      // At most undici's dump limit (128 KiB) of an answer nobody reads, and not past the deadline.
      await res.body.dump({ limit: 128 * 1024, signal }).catch(() => undefined);
      return {
        status: res.statusCode,
        location: typeof location === 'string' ? location : undefined,
        body: '',
      };
    }
    return { status: res.statusCode, body: await this.#read(res.body, signal) };
  }

  async #read(body: AsyncIterable<Buffer> & { destroy(): void }, signal: AbortSignal): Promise<string> {
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of body) {
        size += chunk.length;
        if (size > this.#o.maxBytes) {
          body.destroy();
          throw new FetchFailure('parse_error', `the manifest is larger than ${this.#o.maxBytes} bytes`);
        }
        chunks.push(chunk);
      }
    } catch (err) {
      if (err instanceof FetchFailure) throw err;
      if (signal.aborted) throw signal.reason;
      throw networkFailure(err);
    }
    return Buffer.concat(chunks).toString('utf8');
  }

  async close(): Promise<void> {
    await Promise.all([this.#guarded.close(), this.#exempt.close()]);
  }
}

/** A connection failure as a network_error, in words of our own (the code, not the peer's text). */
function networkFailure(err: unknown): FetchFailure {
  const refused = refusalIn(err);
  if (refused) return new FetchFailure('network_error', refused.message);
  const code = codeOf(err);
  const what: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ECONNRESET: 'connection reset',
    ENOTFOUND: 'host not found',
    EAI_AGAIN: 'host name could not be resolved',
    ETIMEDOUT: 'connection timed out',
    UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
    UND_ERR_SOCKET: 'connection closed by the source',
  };
  if (code && what[code]) return new FetchFailure('network_error', `${what[code]} (${code})`);
  if (code?.startsWith('ERR_TLS') || code?.includes('CERT') || code === 'DEPTH_ZERO_SELF_SIGNED_CERT')
    return new FetchFailure('network_error', `TLS failure (${code})`);
  return new FetchFailure('network_error', `the source could not be reached${code ? ` (${code})` : ''}`);
}

function codeOf(err: unknown): string | undefined {
  for (let e = err, depth = 0; e && depth < 8; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR') return code;
    if (e instanceof AggregateError && e.errors[0]) e = e.errors[0];
    else e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}
