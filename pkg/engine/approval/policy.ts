/**
 * Which calls wait for a human (docs/approvals.md, "Policy"). Each field of a call's policy comes
 * from the Agent's tools[] entry, else the Tool's spec.approval, else the default: `required` is
 * true only for an MCP tool its server marks destructive (`destructiveHint: true`, not read-only),
 * `timeout` 10m, `onTimeout` reject. A Team's members are Agents: each keeps its own policy.
 */
import {
  type AgentToolRef,
  APPROVAL_DEFAULTS,
  type ApprovalPolicy,
  type McpToolInfo,
  type Tool,
} from '../../api/index.ts';
import { durationField } from '../duration.ts';
import { QueryFailure } from '../failure.ts';
import { type Scope, sanitizeName } from '../scope.ts';
import { serverTools } from '../targets/mcp-tool.ts';
import type { ResolvedApproval } from './types.ts';

type Hints = McpToolInfo['annotations'];

/**
 * The default of `required` for an MCP tool: what its server says of it. The MCP specification
 * reads a missing destructiveHint as true; Berth asks for approval only where the server says so
 * explicitly (the rule), so servers without annotations do not make every call wait.
 * The hints are the server's own word: set `approval.required` where that is not good enough.
 */
export function requiredByDefault(hints: Hints | undefined): boolean {
  return hints?.destructiveHint === true && hints.readOnlyHint !== true;
}

/** The policy of one call: entry fields, else the tool's, else defaults; `owner` names it in errors. */
export function resolvePolicy(
  entry: ApprovalPolicy | undefined,
  tool: ApprovalPolicy | undefined,
  hints: Hints | undefined,
  owner: string,
): ResolvedApproval {
  const timeout = entry?.timeout ?? tool?.timeout ?? APPROVAL_DEFAULTS.timeout;
  let timeoutMs: number;
  try {
    timeoutMs = durationField(timeout, APPROVAL_DEFAULTS.timeout, 'approval.timeout');
  } catch (err) {
    throw new QueryFailure('InvalidTarget', `${owner}: ${(err as Error).message}`);
  }
  const approvers = entry?.approvers ?? tool?.approvers;
  return {
    required: entry?.required ?? tool?.required ?? requiredByDefault(hints),
    timeout,
    timeoutMs,
    onTimeout: entry?.onTimeout ?? tool?.onTimeout ?? APPROVAL_DEFAULTS.onTimeout,
    ...(approvers?.length ? { approvers } : {}),
  };
}

/** An mcp Tool's hints, from its server's status (the controller's listing). */
function toolHints(scope: Scope, tool: Tool): Hints | undefined {
  const ref = tool.spec.mcp;
  if (tool.spec.type !== 'mcp' || !ref) return undefined;
  const server = scope.deps.lookup.mcpServer?.(scope.namespace, ref.serverRef.name);
  return server?.status?.tools?.find((t) => t.name === ref.toolName)?.annotations;
}

/** The policy of a Tool called on its own (`tool/<name>` query). */
export function toolPolicy(scope: Scope, tool: Tool): ResolvedApproval {
  return resolvePolicy(undefined, tool.spec.approval, toolHints(scope, tool), `Tool ${tool.metadata.name}`);
}

/**
 * The policy of each function an agent offers, by the name the model calls it (the names
 * agent-tools.ts gives: a Tool's sanitized name, an MCP tool's rename or sanitized name).
 */
export async function agentPolicies(
  scope: Scope,
  refs: AgentToolRef[],
  owner: string,
): Promise<Map<string, ResolvedApproval>> {
  const out = new Map<string, ResolvedApproval>();
  for (const ref of refs) {
    if (ref.name) {
      const tool = scope.deps.lookup.tool(scope.namespace, ref.name);
      if (!tool) continue; // agentFunctions already failed the query for it
      const hints = toolHints(scope, tool);
      out.set(sanitizeName(ref.name), resolvePolicy(ref.approval, tool.spec.approval, hints, owner));
    } else if (ref.mcpServerRef) {
      const server = scope.deps.lookup.mcpServer?.(scope.namespace, ref.mcpServerRef.name);
      if (!server) continue;
      const tools = await serverTools(scope, server).catch(() => [] as McpToolInfo[]);
      for (const t of tools) {
        if (ref.toolNames && !ref.toolNames.includes(t.name)) continue;
        const name = ref.rename?.[t.name] ?? sanitizeName(t.name);
        out.set(name, resolvePolicy(ref.approval, undefined, t.annotations, owner));
      }
    }
  }
  return out;
}
