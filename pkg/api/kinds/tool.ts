import { z } from 'zod';
import { commonStatusSchema, durationSchema, headerSchema } from '../common.ts';
import { ageColumn, type KindDef, type Resource } from '../kind-def.ts';
import { approvalPolicySchema } from './approval.ts';
import { mcpServerRefSchema } from './mcpserver.ts';

export const TOOL_URL_RULE = "self.matches('^https?://[^/?#]+')";

export const toolSpecSchema = z
  .object({
    type: z
      .enum(['http', 'demo', 'mcp'])
      .default('http')
      .describe(
        'http: the tool is an HTTP endpoint (spec.http); mcp: one tool of an MCPServer (spec.mcp); demo: a built-in tool answered inside the engine that echoes its arguments, for first runs without network',
      ),
    description: z.string().optional().describe('What the tool does; offered to models for function calling'),
    inputSchema: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('JSON Schema of the arguments, offered to models for function calling')
      .meta({ 'x-kubernetes-preserve-unknown-fields': true }),
    http: z
      .object({
        url: z
          .string()
          .min(1)
          .describe('Absolute http:// or https:// URL called with the input')
          .meta({
            'x-kubernetes-validations': [
              { rule: TOOL_URL_RULE, message: 'url must be an absolute http:// or https:// URL' },
            ],
          }),
        method: z
          .enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE'])
          .default('POST')
          .describe(
            'HTTP method; GET and DELETE send the arguments as query parameters, the others as a JSON body',
          ),
        headers: z.array(headerSchema).optional().describe('Extra headers sent with every call'),
        timeout: durationSchema.optional().describe('Call timeout (default 30s)'),
      })
      .optional()
      .describe('The HTTP endpoint of an http tool (required when type is http)'),
    mcp: z
      .object({
        serverRef: mcpServerRefSchema.describe('The MCPServer that offers the tool'),
        toolName: z.string().min(1).max(256).describe('The tool name as the server lists it'),
      })
      .optional()
      .describe(
        "The MCP tool of an mcp tool (required when type is mcp); description and inputSchema default to the server's",
      ),
    approval: approvalPolicySchema
      .optional()
      .describe(
        "The tool's default approval policy; an Agent's tools[].approval overrides it field by field",
      ),
  })
  .refine((s) => s.type !== 'http' || !!s.http, {
    message: 'http is required unless type is demo or mcp',
    path: ['http'],
  })
  .refine((s) => s.type !== 'mcp' || !!s.mcp, { message: 'mcp is required when type is mcp', path: ['mcp'] })
  .meta({
    'x-kubernetes-validations': [
      {
        rule: "self.type != 'http' || has(self.http)",
        message: 'http is required unless type is demo or mcp',
      },
      { rule: "self.type != 'mcp' || has(self.mcp)", message: 'mcp is required when type is mcp' },
    ],
  });
export const toolStatusSchema = commonStatusSchema;

export type ToolSpec = z.infer<typeof toolSpecSchema>;
export type Tool = Resource<ToolSpec, z.infer<typeof toolStatusSchema>>;

export const toolKind: KindDef = {
  kind: 'Tool',
  description:
    'A function agents may call (an HTTP endpoint, one tool of an MCPServer, or the built-in demo tool). Target of a Query as tool/<name>.',
  plural: 'tools',
  singular: 'tool',
  shortNames: ['tl'],
  spec: toolSpecSchema,
  status: toolStatusSchema,
  printerColumns: [
    { name: 'Type', type: 'string', jsonPath: '.spec.type' },
    { name: 'Method', type: 'string', jsonPath: '.spec.http.method' },
    { name: 'URL', type: 'string', jsonPath: '.spec.http.url' },
    { name: 'MCP Server', type: 'string', jsonPath: '.spec.mcp.serverRef.name', priority: 1 },
    ageColumn,
  ],
};
