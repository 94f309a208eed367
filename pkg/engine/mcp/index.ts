/** Berth's MCP client (docs/mcp.md): discovery and tool calls over both protocol revisions. */
export {
  type CallOutcome,
  type Discovery,
  McpClient,
  type McpClientOptions,
  type McpEndpoint,
} from './client.ts';
export { McpFailure, type McpFailureReason } from './errors.ts';
export { MAX_RESULT_CHARS } from './result.ts';
export type { WireTool } from './session.ts';
