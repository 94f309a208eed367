/**
 * Berth's MCP client: tool discovery and tool calls against an MCP server, each bounded — a deadline
 * per attempt (`spec.timeout`), retries of transient failures (`spec.maxRetries`), at most
 * `maxPages` pages and `maxTools` tools, answers under the engine's byte cap (`mcp` kind) and
 * through its outbound guard (SSRF rule, same-origin redirects). Each exchange opens its own session
 * (session.ts), except that a tool call's 2025-11-25 session is kept for the next call (pool.ts);
 * the revision a server answered is remembered (`eraTtlMs`) so later calls skip the probe. docs/mcp.md says all of this for users.
 */
import { createHash } from 'node:crypto';
import type { HttpClient } from '../http.ts';
import { McpFailure, mcpFailure } from './errors.ts';
import { SessionPool } from './pool.ts';
import { resultText } from './result.ts';
import type { Era, McpSession, WireTool } from './session.ts';

/** The SDKs load at the first MCP exchange: a process without MCP servers never pays for them. */
let sessions: Promise<typeof import('./session.ts')> | undefined;
const loadSessions = () => {
  sessions ??= import('./session.ts');
  return sessions;
};

export interface McpEndpoint {
  /** `MCPServer <namespace>/<name>`, in every message. */
  label: string;
  url: string;
  /** Header values (from Secrets too): sent to this URL only, never logged. */
  headers: Record<string, string>;
  timeoutMs: number;
  /** `spec.timeout` as written, for messages (`30s`). */
  timeoutText?: string;
  maxRetries: number;
}

export interface Discovery {
  protocolVersion: string;
  era: 'modern' | 'legacy';
  serverInfo?: { name?: string; version?: string };
  tools: WireTool[];
}

export interface CallOutcome {
  text: string;
  /** The tool said it failed (`isError`): the text says why. */
  isError: boolean;
  protocolVersion: string;
}

export interface McpClientOptions {
  /** tools/list pages one discovery reads at most (a server looping on cursors ends here). Default 20. */
  maxPages?: number;
  /** Tools one server may list. Default 512. */
  maxTools?: number;
  /** How long a server's revision is remembered. Default 10 min. */
  eraTtlMs?: number;
  /** How long a discovery made for a query is reused by later ones. Default 30 s. */
  toolsTtlMs?: number;
  /** First retry delay (doubled per attempt, at most 2 s). Default 250 ms. */
  retryBaseMs?: number;
}

const MAX_CACHED = 1000;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** A small map with an expiry per entry and a size bound (oldest out first). */
class Expiring<V> {
  readonly #m = new Map<string, { v: V; until: number }>();
  get(k: string): V | undefined {
    const e = this.#m.get(k);
    if (!e) return undefined;
    if (e.until > Date.now()) return e.v;
    this.#m.delete(k);
    return undefined;
  }
  set(k: string, v: V, ttlMs: number): void {
    this.#m.delete(k);
    this.#m.set(k, { v, until: Date.now() + ttlMs });
    if (this.#m.size > MAX_CACHED) this.#m.delete(this.#m.keys().next().value as string);
  }
  delete(k: string): void {
    this.#m.delete(k);
  }
}

export class McpClient {
  readonly #http: Pick<HttpClient, 'fetchFor'>;
  readonly #o: Required<McpClientOptions>;
  readonly #eras = new Expiring<Era>();
  readonly #tools = new Expiring<Discovery>();
  readonly #pool = new SessionPool();

  constructor(http: Pick<HttpClient, 'fetchFor'>, opts: McpClientOptions = {}) {
    this.#http = http;
    this.#o = {
      maxPages: opts.maxPages ?? 20,
      maxTools: opts.maxTools ?? 512,
      eraTtlMs: opts.eraTtlMs ?? 10 * 60_000,
      toolsTtlMs: opts.toolsTtlMs ?? 30_000,
      retryBaseMs: opts.retryBaseMs ?? 250,
    };
  }

  /** Lists the server's tools (every page), probing its revision afresh. */
  async discover(ep: McpEndpoint, signal: AbortSignal): Promise<Discovery> {
    const key = keyOf(ep);
    const found = await this.#attempts(
      ep,
      'discovery',
      signal,
      () => true,
      async (s) => {
        this.#eras.delete(key);
        return this.#session(ep, s, {}, async (session, opts) => {
          const tools = await this.#listAll(ep, session, opts);
          return {
            protocolVersion: session.protocolVersion,
            era: session.era.kind,
            serverInfo: session.serverInfo,
            tools,
          } satisfies Discovery;
        });
      },
    );
    this.#tools.set(key, found, this.#o.toolsTtlMs);
    return found;
  }

  /** Ends the kept 2025-11-25 sessions (DELETE each). */
  close(): Promise<void> {
    return this.#pool.close();
  }

  /** The tools, from a discovery of the last `toolsTtlMs` when there is one. */
  async tools(ep: McpEndpoint, signal: AbortSignal): Promise<Discovery> {
    return this.#tools.get(keyOf(ep)) ?? this.discover(ep, signal);
  }

  /**
   * Calls one tool. `meta` goes in the request's `_meta` (the trace context). A transient failure is
   * retried only when the server cannot have run the call, or `idempotent` says running it twice is
   * harmless.
   */
  async callTool(
    ep: McpEndpoint,
    name: string,
    args: Record<string, unknown>,
    o: { signal: AbortSignal; meta?: Record<string, string>; idempotent?: boolean },
  ): Promise<CallOutcome> {
    const what = `tools/call ${name}`;
    const retryable = (f: McpFailure) => f.unsent || !!o.idempotent;
    return this.#attempts(ep, what, o.signal, retryable, (s) =>
      this.#session(ep, s, { reuse: true }, async (session, opts) => {
        const res = await session.callTool(name, args, o.meta ?? {}, opts);
        if (!res || typeof res !== 'object')
          throw new McpFailure('InvalidAnswer', `${ep.label}: ${what}: the result is not an object`);
        return {
          text: scrub(resultText(res), ep),
          isError: res.isError === true,
          protocolVersion: session.protocolVersion,
        };
      }),
    );
  }

  /**
   * One attempt: a session (probing unless the revision is known) and `fn`, all under one deadline
   * of `timeoutMs`; the session is closed afterwards without holding the answer back.
   */
  async #session<T>(
    ep: McpEndpoint,
    signal: AbortSignal,
    /** `reuse`: an idle 2025-11-25 session may serve it, and it is kept afterwards (pool.ts). */
    o: { reuse?: boolean },
    fn: (s: McpSession, opts: { signal: AbortSignal; timeoutMs: number }) => Promise<T>,
  ): Promise<T> {
    const key = keyOf(ep);
    const deadline = AbortSignal.timeout(ep.timeoutMs);
    const both = AbortSignal.any([signal, deadline]);
    const started = Date.now();
    const left = () => Math.max(1, ep.timeoutMs - (Date.now() - started));
    let session: McpSession | undefined;
    let opened = false;
    const pooled = o.reuse ? this.#pool.take(key) : undefined;
    try {
      const { openSession } = await loadSessions();
      session =
        pooled ??
        (await openSession({
          label: ep.label,
          url: new URL(ep.url),
          headers: ep.headers,
          // Answers under the `mcp` byte cap; redirects within the origin only (the headers never leave it).
          fetch: this.#http.fetchFor({ kind: 'mcp', configured: Object.keys(ep.headers) }),
          era: this.#eras.get(key),
          signal: both,
          timeoutMs: left(),
        }));
      this.#eras.set(key, session.era, this.#o.eraTtlMs);
      opened = true;
      const out = await fn(session, { signal: both, timeoutMs: left() });
      if (o.reuse) {
        this.#pool.give(key, session);
        session = undefined;
      }
      return out;
    } catch (err) {
      // A kept session the server no longer knows (404: it restarted): nothing ran; a new one will.
      const failed = session?.failure.aborted ? session.failure.reason : err;
      if (pooled && session === pooled && httpStatusOf(failed) === 404) {
        this.#pool.drop(key);
        throw new McpFailure('Disconnected', `${ep.label}: the server forgot the session`, {
          transient: true,
          unsent: true,
          cause: err,
        });
      }
      // A remembered revision may be stale (the server was replaced): the next attempt probes.
      this.#eras.delete(key);
      this.#pool.drop(key);
      if (signal.aborted) throw signal.reason ?? err;
      if (session?.failure.aborted) throw session.failure.reason;
      if (deadline.aborted || isTimeout(err))
        throw new McpFailure(
          'Timeout',
          `${ep.label}: no answer within ${ep.timeoutText ?? `${ep.timeoutMs} ms`}`,
          {
            cause: err,
          },
        );
      const f = mcpFailure(ep.label, err);
      // The handshake (probe, initialize) failed: no request of the exchange reached a tool yet.
      if (!opened && f.transient && !f.unsent)
        throw new McpFailure(f.reason, f.message, { transient: true, unsent: true, cause: f.cause });
      throw f;
    } finally {
      if (session) void session.close();
    }
  }

  async #listAll(ep: McpEndpoint, session: McpSession, opts: { signal: AbortSignal; timeoutMs: number }) {
    const tools: WireTool[] = [];
    const names = new Set<string>();
    const cursors = new Set<string>();
    let cursor: string | undefined;
    for (let page = 1; ; page++) {
      const res = await session.listPage(cursor, opts);
      if (!res || !Array.isArray(res.tools))
        throw new McpFailure('InvalidAnswer', `${ep.label}: tools/list answered without a tools array`);
      for (const t of res.tools) {
        if (!t || typeof t.name !== 'string' || names.has(t.name)) continue;
        names.add(t.name);
        tools.push(t);
      }
      if (tools.length > this.#o.maxTools)
        throw new McpFailure(
          'TooManyTools',
          `${ep.label}: the server lists more than ${this.#o.maxTools} tools`,
        );
      const next = res.nextCursor;
      if (next === undefined || next === null || next === '') return tools;
      if (typeof next !== 'string' || cursors.has(next))
        throw new McpFailure(
          'TooManyPages',
          `${ep.label}: tools/list page ${page} repeats an earlier cursor; the server's pagination never ends`,
        );
      if (page >= this.#o.maxPages)
        throw new McpFailure(
          'TooManyPages',
          `${ep.label}: tools/list still had more after ${this.#o.maxPages} pages; Berth reads at most ${this.#o.maxPages}`,
        );
      cursors.add(next);
      cursor = next;
    }
  }

  async #attempts<T>(
    ep: McpEndpoint,
    what: string,
    signal: AbortSignal,
    canRetry: (f: McpFailure) => boolean,
    fn: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn(signal);
      } catch (err) {
        if (signal.aborted) throw signal.reason ?? err;
        const f = err instanceof McpFailure ? err : mcpFailure(ep.label, err);
        if (attempt >= ep.maxRetries || !f.transient || !canRetry(f)) {
          const tries = attempt > 0 ? ` (${attempt + 1} attempts)` : '';
          throw new McpFailure(f.reason, scrub(`${withWhat(f.message, ep.label, what)}${tries}`, ep), {
            transient: f.transient,
            unsent: f.unsent,
            cause: f,
          });
        }
        await sleep(Math.min(this.#o.retryBaseMs * 2 ** attempt, 2000), signal);
      }
    }
  }
}

/** `MCPServer x: …` → `MCPServer x: <what>: …` unless the message names the request already. */
function withWhat(message: string, label: string, what: string): string {
  if (message.includes(what) || !message.startsWith(`${label}: `)) return message;
  return `${label}: ${what}: ${message.slice(label.length + 2)}`;
}

/**
 * The HTTP status an SDK error carries (v2 `data.status`, 1.x `code`), if any, also when the error
 * reached us as the cause of the session's failure (the transport reports it there first).
 */
function httpStatusOf(err: unknown): number | undefined {
  for (
    let e = err as
        | { data?: { status?: unknown }; code?: unknown; message?: string; cause?: unknown }
        | undefined,
      depth = 0;
    e && depth < 5;
    depth++
  ) {
    if (typeof e.data?.status === 'number') return e.data.status;
    if (typeof e.code === 'number' && e.code >= 100 && /^Streamable HTTP error/.test(e.message ?? ''))
      return e.code;
    e = e.cause as typeof e;
  }
  return undefined;
}

function isTimeout(err: unknown): boolean {
  // v2: SdkError REQUEST_TIMEOUT; 1.x: McpError -32001 carrying the timeout it hit.
  const e = err as { code?: unknown; name?: string; data?: { timeout?: unknown } };
  return (
    e?.code === 'REQUEST_TIMEOUT' ||
    (e?.code === -32001 && e.data?.timeout !== undefined) ||
    e?.name === 'TimeoutError'
  );
}

/**
 * `text` without the endpoint's header values (nor the token part of `Bearer <token>`): a server
 * that echoes the credential back must not pass it on to a model, a status or an event.
 */
function scrub(text: string, ep: McpEndpoint): string {
  let out = text;
  for (const v of Object.values(ep.headers)) {
    for (const secret of [v, /^[A-Za-z]+ (.{8,})$/.exec(v)?.[1]]) {
      if (secret && secret.length >= 8 && out.includes(secret)) out = out.split(secret).join('[redacted]');
    }
  }
  return out;
}

/** One key per endpoint and credentials (a hash: header values stay out of the key). */
function keyOf(ep: McpEndpoint): string {
  const h = createHash('sha256').update(ep.url);
  for (const k of Object.keys(ep.headers).sort()) h.update(`\n${k}:${ep.headers[k]}`);
  return h.digest('hex');
}
