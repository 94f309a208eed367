/**
 * The functions an agent offers its model: each Tool it names (http, demo, or mcp), and the tools of
 * each MCPServer it references — all of them, or `toolNames`, under the server's names or the
 * `rename`d ones. Descriptions and input schemas are the Tool's, else the server's. Two functions
 * under one name are refused (the model could not tell them apart): rename one.
 */
import type { Context } from '@opentelemetry/api';
import type { AgentToolRef, McpToolInfo, Tool } from '../../api/index.ts';
import { QueryFailure } from '../failure.ts';
import type { ChatCompletionTool } from '../model-client.ts';
import { type Scope, sanitizeName } from '../scope.ts';
import { invokeMcp, requireMcpServer, serverTools } from './mcp-tool.ts';
import { invokeTool, requireTool } from './tool.ts';

export interface AgentFunction {
  /** The name the model calls it by. */
  name: string;
  def: ChatCompletionTool;
  /** What the function is, for the collision message: `Tool weather`, `MCPServer s tool t`. */
  source: string;
  invoke(scope: Scope, ctx: Context, args: string, agent: string): Promise<string>;
}

const EMPTY_SCHEMA = { type: 'object', properties: {} };

/** A JSON Schema as a model's `parameters`: an object schema, without the `$schema` some providers refuse. */
function parameters(schema: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return EMPTY_SCHEMA;
  const { $schema: _ignored, ...rest } = schema;
  return rest.type === undefined ? { type: 'object', ...rest } : rest;
}

const fn = (name: string, description: string, params: Record<string, unknown>): ChatCompletionTool => ({
  type: 'function',
  function: { name, description, parameters: params },
});

async function toolFunction(scope: Scope, tool: Tool): Promise<AgentFunction> {
  const name = tool.metadata.name;
  let description = tool.spec.description;
  let schema = tool.spec.inputSchema as Record<string, unknown> | undefined;
  if (tool.spec.type === 'mcp' && tool.spec.mcp && (!description || !schema)) {
    // The server's own description and schema, when the Tool gives none (a listing that fails leaves
    // the defaults: the call itself will say what is wrong).
    const server = requireMcpServer(scope, tool.spec.mcp.serverRef.name, `Tool ${name}`);
    const info = await serverTools(scope, server).then(
      (tools) => tools.find((t) => t.name === tool.spec.mcp?.toolName),
      () => undefined,
    );
    description ??= info?.description;
    schema ??= info?.inputSchema as Record<string, unknown> | undefined;
  }
  const kind = tool.spec.type === 'mcp' ? 'MCP tool' : 'HTTP tool';
  return {
    name: sanitizeName(name),
    def: fn(sanitizeName(name), description ?? `${kind} ${name}`, parameters(schema)),
    source: `Tool ${name}`,
    invoke: (s, ctx, args, agent) => invokeTool(s, ctx, tool, args, agent),
  };
}

async function serverFunctions(scope: Scope, ref: AgentToolRef, owner: string): Promise<AgentFunction[]> {
  const serverName = ref.mcpServerRef?.name ?? '';
  const server = requireMcpServer(scope, serverName, owner);
  let tools: McpToolInfo[];
  try {
    tools = await serverTools(scope, server);
  } catch (err) {
    if (err instanceof QueryFailure)
      throw new QueryFailure(err.reason, `${owner}: ${err.message}`, { cause: err });
    throw err;
  }
  const wanted = ref.toolNames;
  if (wanted) {
    const missing = wanted.filter((n) => !tools.some((t) => t.name === n));
    if (missing.length)
      throw new QueryFailure(
        'InvalidTarget',
        `${owner}: MCPServer ${serverName} lists no tool ${missing.join(', ')} (it lists: ${tools.map((t) => t.name).join(', ') || 'none'})`,
      );
  }
  const chosen = wanted ? tools.filter((t) => wanted.includes(t.name)) : tools;
  return chosen.map((t) => {
    const name = ref.rename?.[t.name] ?? sanitizeName(t.name);
    const idempotent = !!(t.annotations?.readOnlyHint || t.annotations?.idempotentHint);
    return {
      name,
      def: fn(
        name,
        t.description ?? `MCP tool ${t.name} of MCPServer ${serverName}`,
        parameters(t.inputSchema),
      ),
      source: `MCPServer ${serverName} tool ${t.name}`,
      invoke: (s, ctx, args, agent) =>
        invokeMcp(s, ctx, { server, toolName: t.name, name, idempotent }, args, agent),
    };
  });
}

/** The agent's functions by the name the model calls them; InvalidTarget when one is missing or named twice. */
export async function agentFunctions(
  scope: Scope,
  refs: AgentToolRef[],
  owner: string,
): Promise<Map<string, AgentFunction>> {
  const lists = await Promise.all(
    refs.map(async (ref) =>
      ref.mcpServerRef
        ? serverFunctions(scope, ref, owner)
        : [await toolFunction(scope, requireTool(scope, ref.name ?? '', owner))],
    ),
  );
  const byName = new Map<string, AgentFunction>();
  for (const f of lists.flat()) {
    const prior = byName.get(f.name);
    if (prior)
      throw new QueryFailure(
        'InvalidTarget',
        `${owner}: two tools are offered as "${f.name}" (${prior.source} and ${f.source}); rename one with rename: {<tool>: <new name>}`,
      );
    byName.set(f.name, f);
  }
  return byName;
}
