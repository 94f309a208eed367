/**
 * The official MCP clients, as an IDE or agent would point them at Berth's `/mcp`: the 2.x
 * `@modelcontextprotocol/client` (pinned to 2026-07-28, probing with `auto`, or the 2025
 * handshake) and the 1.x `@modelcontextprotocol/sdk` Client (2025-11-25 only), each over its
 * streamable HTTP transport, with the credential in a header.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export type Revision = 'modern' | 'auto' | 'legacy-v2' | 'legacy-v1';
export const MODERN = '2026-07-28';
export const LEGACY = '2025-11-25';

/** What the tests use of a client, whichever SDK it is. */
export interface McpClient {
  revision: Revision;
  listTools(): Promise<{ tools: Array<{ name: string; annotations?: Record<string, unknown> }> }>;
  callTool(
    params: { name: string; arguments?: Record<string, unknown> },
    opts?: { onprogress?: (p: { progress: number; message?: string }) => void; signal?: AbortSignal },
  ): Promise<ToolResult>;
  protocolVersion(): string | undefined;
  /** The 2025 session id (undefined for 2026-07-28). */
  sessionId(): string | undefined;
  close(): Promise<void>;
}

export interface ToolResult {
  content?: Array<{ type: string; text?: string }>;
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

export const textOf = (r: ToolResult) => (r.content ?? []).map((c) => c.text ?? '').join('');

/** A connected client of `revision` for `<base>/mcp`; `headers` carry the credential. */
export async function connect(
  base: string,
  revision: Revision,
  headers: Record<string, string> = {},
): Promise<McpClient> {
  const url = new URL(`${base}/mcp`);
  const info = { name: `berth-test-${revision}`, version: '1.0.0' };
  if (revision === 'legacy-v1') {
    const client = new ClientV1(info);
    const transport = new TransportV1(url, { requestInit: { headers } });
    await client.connect(transport);
    return {
      revision,
      listTools: () => client.listTools(),
      callTool: (p, o = {}) =>
        client.callTool(p, undefined, {
          ...o,
          // Long enough for a slow Query; the SDK's default is 60 s.
          timeout: 120_000,
        }) as Promise<ToolResult>,
      protocolVersion: () => transport.protocolVersion,
      sessionId: () => transport.sessionId,
      close: async () => {
        await transport.terminateSession().catch(() => {});
        await client.close();
      },
    };
  }
  const mode = revision === 'modern' ? { pin: MODERN } : revision === 'auto' ? 'auto' : 'legacy';
  const client = new Client(info, { versionNegotiation: { mode } });
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers } });
  await client.connect(transport);
  return {
    revision,
    listTools: () => client.listTools(),
    callTool: (p, o = {}) => client.callTool(p, { ...o, timeout: 120_000 }) as Promise<ToolResult>,
    protocolVersion: () => client.getNegotiatedProtocolVersion(),
    sessionId: () => transport.sessionId,
    close: async () => {
      if (transport.sessionId) await transport.terminateSession().catch(() => {});
      await client.close();
    },
  };
}
