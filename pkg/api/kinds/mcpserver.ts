import { z } from 'zod';
import { addressSchema, commonStatusSchema, durationSchema, headerSchema, nameSchema } from '../common.ts';
import { ageColumn, type KindDef, type Resource } from '../kind-def.ts';

/** The MCP revisions Berth speaks: the stateless one first, the `initialize` one as fallback (docs/mcp.md). */
export const MCP_MODERN_REVISION = '2026-07-28';
export const MCP_LEGACY_REVISION = '2025-11-25';

/** Defaults of the spec fields, applied by the controller and the engine (documented in docs/mcp.md). */
export const MCP_DEFAULTS = {
  timeout: '30s',
  discoveryInterval: '5m',
  maxRetries: 2,
} as const;

/** What the status keeps of one tool (descriptions and schemas are capped by the controller). */
export const mcpToolSchema = z.object({
  name: z.string().describe('The tool name the server gave'),
  title: z.string().optional().describe('Human-readable title, when the server gave one'),
  description: z.string().optional().describe('What the tool does, as the server describes it'),
  inputSchema: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('JSON Schema of the arguments, as the server gave it')
    .meta({ 'x-kubernetes-preserve-unknown-fields': true }),
  annotations: z
    .object({
      title: z.string().optional().describe('Human-readable title of the tool'),
      readOnlyHint: z.boolean().optional().describe('The tool does not change its environment'),
      destructiveHint: z.boolean().optional().describe('The tool may destroy or overwrite data'),
      idempotentHint: z
        .boolean()
        .optional()
        .describe('Calling it again with the same arguments changes nothing more'),
      openWorldHint: z.boolean().optional().describe('The tool reaches outside systems'),
    })
    .optional()
    .describe('Hints the server gave about the tool (untrusted: the server says them of itself)'),
});
export type McpToolInfo = z.infer<typeof mcpToolSchema>;

export const mcpServerSpecSchema = z.object({
  description: z.string().optional().describe('What the server offers; shown in listings'),
  address: addressSchema.describe(
    'The MCP endpoint (the URL the server serves streamable HTTP at, e.g. http://host:port/mcp), or an in-cluster Service',
  ),
  headers: z
    .array(headerSchema)
    .optional()
    .describe(
      'Headers sent with every MCP request, e.g. Authorization; values from Secrets labelled berth.dev/usage=engine',
    ),
  transport: z
    .enum(['streamable-http'])
    .default('streamable-http')
    .describe('How the server is reached: streamable HTTP, the only transport Berth speaks'),
  timeout: durationSchema
    .optional()
    .describe('Per request (discovery, each tool call) timeout (default 30s)'),
  maxRetries: z
    .number()
    .int()
    .min(0)
    .max(10)
    .optional()
    .describe(
      'Retries of a transient failure (refused connection, HTTP 429/502/503/504, expired session) per request (default 2); a tool call is retried only when the server cannot have run it, or the tool says it is idempotent',
    ),
  discoveryInterval: durationSchema
    .optional()
    .describe('How often the controller lists the tools again (default 5m; at least 10s)'),
});

export const mcpServerStatusSchema = commonStatusSchema.extend({
  phase: z
    .enum(['ready', 'error'])
    .optional()
    .describe('ready when the last discovery listed the tools, error otherwise'),
  lastResolvedAddress: z.string().optional().describe('The URL the address last resolved to'),
  protocolVersion: z
    .string()
    .optional()
    .describe(
      `The MCP revision the server answered: ${MCP_MODERN_REVISION}, or ${MCP_LEGACY_REVISION} and older`,
    ),
  serverInfo: z
    .object({
      name: z.string().optional().describe('Server name'),
      version: z.string().optional().describe('Server version'),
    })
    .optional()
    .describe('The name and version the server reported'),
  toolCount: z.number().int().optional().describe('How many tools the server lists'),
  tools: z.array(mcpToolSchema).optional().describe('The tools the server listed at the last discovery'),
  lastDiscoveryTime: z
    .string()
    .optional()
    .describe('When the tools were last listed successfully (RFC 3339)')
    .meta({ format: 'date-time' }),
});

export type MCPServerSpec = z.infer<typeof mcpServerSpecSchema>;
export type MCPServerStatus = z.infer<typeof mcpServerStatusSchema>;
export type MCPServer = Resource<MCPServerSpec, MCPServerStatus>;

/** An Agent's or Tool's reference to an MCPServer of its namespace. */
export const mcpServerRefSchema = z.object({
  name: nameSchema.describe('MCPServer name in the same namespace'),
});

export const mcpServerKind: KindDef = {
  kind: 'MCPServer',
  description:
    'A remote Model Context Protocol server (streamable HTTP) whose tools agents may call; the controller lists its tools.',
  plural: 'mcpservers',
  singular: 'mcpserver',
  shortNames: ['mcp'],
  spec: mcpServerSpecSchema,
  status: mcpServerStatusSchema,
  printerColumns: [
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'Protocol', type: 'string', jsonPath: '.status.protocolVersion' },
    { name: 'Tools', type: 'integer', jsonPath: '.status.toolCount' },
    { name: 'Address', type: 'string', jsonPath: '.status.lastResolvedAddress', priority: 1 },
    ageColumn,
  ],
};
