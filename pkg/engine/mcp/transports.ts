/**
 * The SDKs' streamable HTTP client transports, each with the engine's guarded fetch (SSRF rule,
 * byte caps, MCP redirect rule: same origin only) and two additions: every send is tracked so a
 * session can let its last messages (a cancellation) leave before it closes, and the probing
 * 2026-07-28 transport refuses to send `initialize` — that is where the v2 client falls back to the
 * 2025 handshake, which Berth runs with the 1.x SDK instead (docs/mcp.md, "Which revision").
 */
import { StreamableHTTPClientTransport as ModernHttp } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport as LegacyHttp } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { EngineFetch } from '../http.ts';

/** The v2 client decided the server speaks only the 2025 revision (its probe's verdict). */
export class LegacyVerdict extends Error {
  override name = 'LegacyVerdict';
}

/** Sends in flight, so `settle()` can wait for them (bounded) before the transport closes. */
class Pending {
  readonly #sends = new Set<Promise<unknown>>();

  track<T>(p: Promise<T>): Promise<T> {
    const quiet = p.catch(() => undefined);
    this.#sends.add(quiet);
    void quiet.finally(() => this.#sends.delete(quiet));
    return p;
  }

  async settle(ms: number): Promise<void> {
    if (this.#sends.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all([...this.#sends]),
      new Promise((r) => {
        timer = setTimeout(r, ms);
      }),
    ]);
    clearTimeout(timer);
  }
}

export interface TransportOptions {
  url: URL;
  fetch: EngineFetch;
  headers: Record<string, string>;
}

/** 2026-07-28 (and the probe): the v2 transport; `initialize` is never sent through it. */
export class ModernTransport extends ModernHttp {
  readonly pending = new Pending();

  constructor(o: TransportOptions) {
    super(o.url, {
      fetch: o.fetch,
      requestInit: { headers: o.headers },
      // No SSE resumption in this revision; a broken stream ends the request at once.
      reconnectionOptions: {
        maxRetries: 0,
        initialReconnectionDelay: 1000,
        maxReconnectionDelay: 1000,
        reconnectionDelayGrowFactor: 1,
      },
    });
  }

  override send(...args: Parameters<ModernHttp['send']>): Promise<void> {
    const [message] = args;
    if (!Array.isArray(message) && (message as { method?: string }).method === 'initialize')
      return Promise.reject(new LegacyVerdict('the server gave no 2026-07-28 answer to server/discover'));
    return this.pending.track(super.send(...args));
  }
}

/** 2025-11-25: the 1.x transport (sessions, `initialize`); a broken SSE answer is not resumed. */
export class LegacyTransport extends LegacyHttp {
  readonly pending = new Pending();

  constructor(o: TransportOptions) {
    super(o.url, {
      fetch: o.fetch as never,
      requestInit: { headers: o.headers },
      reconnectionOptions: {
        maxRetries: 0,
        initialReconnectionDelay: 1000,
        maxReconnectionDelay: 1000,
        reconnectionDelayGrowFactor: 1,
      },
    });
    // No standalone GET stream after `initialized`: Berth listens to nothing outside its requests
    // (a server request there would be refused anyway), and a kept session holds no connection open.
    (this as unknown as { _startOrAuthSse: () => Promise<void> })._startOrAuthSse = async () => {};
  }

  override send(...args: Parameters<LegacyHttp['send']>): Promise<void> {
    return this.pending.track(super.send(...args));
  }
}
