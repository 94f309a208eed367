/**
 * One exchange with an MCP server (a discovery, or one tool call): a connected SDK client of the
 * revision the server speaks, behind one small interface. 2026-07-28 through
 * `@modelcontextprotocol/client` 2.x (stateless: `server/discover`, then each request on its own);
 * 2025-11-25 through `@modelcontextprotocol/sdk` 1.x (`initialize`, a session, DELETE at the end).
 *
 * Which one: the v2 client probes with `server/discover` in its `auto` mode, and its own classifier
 * decides; where it would fall back to `initialize`, the probing transport refuses (LegacyVerdict)
 * and the 1.x client connects instead (docs/mcp.md, "Which revision"). A known verdict (`era`)
 * skips the probe: a modern one costs no round trip at all.
 *
 * The server must not interrupt: a request for input (elicitation, sampling, roots) ends the
 * exchange with an explained error, and so do a broken stream and an answer that does not parse —
 * `failure` is aborted with the reason, and every request of the session is tied to it.
 */
import { Client as ModernClient } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { MCP_MODERN_REVISION } from '../../api/index.ts';
import type { EngineFetch } from '../http.ts';
import { McpFailure, mcpFailure } from './errors.ts';
import { LegacyTransport, LegacyVerdict, ModernTransport } from './transports.ts';

export const CLIENT_INFO = { name: 'berth', version: '0.1.0' };

type DiscoverResult = NonNullable<ReturnType<ModernClient['getDiscoverResult']>>;
/** What a probe found: a modern server (with what it answered) or a 2025-only one. */
export type Era = { kind: 'modern'; discover: DiscoverResult } | { kind: 'legacy' };

export interface WireTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

export interface WireCallResult {
  content?: unknown[];
  structuredContent?: unknown;
  isError?: boolean;
}

export interface RequestOpts {
  signal: AbortSignal;
  timeoutMs: number;
}

export interface McpSession {
  era: Era;
  protocolVersion: string;
  serverInfo?: { name?: string; version?: string };
  /** Aborted, with an McpFailure as reason, when the server broke the exchange. */
  failure: AbortSignal;
  listPage(cursor: string | undefined, o: RequestOpts): Promise<{ tools: WireTool[]; nextCursor?: string }>;
  callTool(
    name: string,
    args: Record<string, unknown>,
    meta: Record<string, string>,
    o: RequestOpts,
  ): Promise<WireCallResult>;
  /** Lets the last messages leave (a cancellation), ends a 2025 session; never throws. */
  close(): Promise<void>;
}

export interface OpenOptions {
  /** `MCPServer <ns>/<name>`, for messages. */
  label: string;
  url: URL;
  headers: Record<string, string>;
  fetch: EngineFetch;
  /** A verdict of an earlier probe; none: probe. */
  era?: Era;
  signal: AbortSignal;
  timeoutMs: number;
}

/** A server→client request: Berth never answers one (it runs tools unattended). */
function inputRequested(label: string, method: string): McpFailure {
  return new McpFailure(
    'InputRequested',
    `${label}: the server asked for input (${method}); Berth runs tools unattended and answers no elicitation, sampling or roots request`,
  );
}

/** Transport errors that end the exchange; a GET stream the server does not offer is not one. */
function watchErrors(label: string, fail: (f: McpFailure) => void) {
  return (err: Error) => {
    if (err instanceof LegacyVerdict) return;
    const msg = err.message ?? '';
    if (/Failed to open SSE stream|Failed to terminate session|AbortError|aborted/i.test(msg)) return;
    fail(mcpFailure(label, err));
  };
}

const withFailure = (o: RequestOpts, failure: AbortSignal) => ({
  signal: AbortSignal.any([o.signal, failure]),
  timeout: o.timeoutMs,
});

export async function openSession(o: OpenOptions): Promise<McpSession> {
  if (o.era?.kind === 'legacy') return openLegacy(o);
  try {
    return await openModern(o);
  } catch (err) {
    if (err instanceof LegacyVerdict) return openLegacy(o);
    throw err;
  }
}

async function openModern(o: OpenOptions): Promise<McpSession> {
  const failure = new AbortController();
  const fail = (f: McpFailure) => failure.abort(f);
  const transport = new ModernTransport({ url: o.url, fetch: o.fetch, headers: o.headers });
  const client = new ModernClient(CLIENT_INFO, {
    capabilities: {},
    versionNegotiation: { mode: 'auto', probe: { timeoutMs: o.timeoutMs } },
    inputRequired: { autoFulfill: false },
  });
  client.onerror = watchErrors(o.label, fail);
  const prior = o.era?.kind === 'modern' ? { kind: 'modern' as const, discover: o.era.discover } : undefined;
  await client.connect(transport, { timeout: o.timeoutMs, signal: o.signal, ...(prior ? { prior } : {}) });
  const discover = client.getDiscoverResult();
  if (!discover) {
    await client.close().catch(() => undefined);
    throw new McpFailure('UnsupportedRevision', `${o.label}: connected without a server/discover answer`);
  }
  const serverInfo = client.getServerVersion();
  return {
    era: { kind: 'modern', discover },
    protocolVersion: client.getNegotiatedProtocolVersion() ?? MCP_MODERN_REVISION,
    serverInfo: serverInfo && { name: serverInfo.name, version: serverInfo.version },
    failure: failure.signal,
    async listPage(cursor, r) {
      const res = await client.request(
        { method: 'tools/list', params: cursor ? { cursor } : {} },
        withFailure(r, failure.signal),
      );
      return res as { tools: WireTool[]; nextCursor?: string };
    },
    async callTool(name, args, meta, r) {
      const res = (await client.callTool(
        { name, arguments: args, _meta: meta },
        { ...withFailure(r, failure.signal), allowInputRequired: true },
      )) as WireCallResult & { resultType?: string; inputRequests?: Record<string, { method?: string }> };
      if (res.resultType === 'input_required') {
        const methods = Object.values(res.inputRequests ?? {}).map((q) => q?.method ?? 'unknown');
        throw inputRequested(
          `${o.label}: tools/call ${name}`,
          [...new Set(methods)].join(', ') || 'input_required',
        );
      }
      return res;
    },
    async close() {
      await transport.pending.settle(500);
      await client.close().catch(() => undefined);
    },
  };
}

async function openLegacy(o: OpenOptions): Promise<McpSession> {
  const failure = new AbortController();
  const fail = (f: McpFailure) => failure.abort(f);
  const transport = new LegacyTransport({ url: o.url, fetch: o.fetch, headers: o.headers });
  const client = new LegacyClient(CLIENT_INFO, { capabilities: {} });
  client.onerror = watchErrors(o.label, fail);
  // Any server→client request but ping (answered by the SDK itself): refused, and the exchange ends.
  client.fallbackRequestHandler = async (request) => {
    fail(inputRequested(o.label, request.method));
    throw new McpError(
      ErrorCode.MethodNotFound,
      `Berth does not answer ${request.method}: its tools run unattended`,
    );
  };
  try {
    await client.connect(transport, { timeout: o.timeoutMs, signal: o.signal });
  } catch (err) {
    await client.close().catch(() => undefined);
    throw err;
  }
  const serverInfo = client.getServerVersion();
  return {
    era: { kind: 'legacy' },
    protocolVersion: transport.protocolVersion ?? 'unknown',
    serverInfo: serverInfo && { name: serverInfo.name, version: serverInfo.version },
    failure: failure.signal,
    async listPage(cursor, r) {
      const res = await client.listTools(cursor ? { cursor } : {}, withFailure(r, failure.signal));
      return res as { tools: WireTool[]; nextCursor?: string };
    },
    async callTool(name, args, meta, r) {
      return (await client.callTool(
        { name, arguments: args, _meta: meta },
        undefined,
        withFailure(r, failure.signal),
      )) as WireCallResult;
    },
    async close() {
      await transport.pending.settle(500);
      // The server keeps a session until told: end it (bounded; a server that does not answer is left).
      await Promise.race([
        transport.terminateSession().catch(() => undefined),
        new Promise((r) => setTimeout(r, 2000).unref()),
      ]);
      await client.close().catch(() => undefined);
    },
  };
}
