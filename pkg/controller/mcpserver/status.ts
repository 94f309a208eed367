/**
 * An MCPServer's status from what the controller found: the address resolution, a discovery in
 * flight, its outcome. Conditions `Available` (the tools are listed) and `Discovering` (a listing
 * is under way) with reasons (docs/mcp.md, "Status"); a failed discovery keeps the last tool list,
 * so agents go on offering the tools (a call then says what is wrong).
 */
import type { Condition, MCPServer, McpToolInfo } from '../../api/index.ts';
import type { Discovery, WireTool } from '../../engine/mcp/index.ts';
import { boundedText } from '../../engine/upstream.ts';

/** The status keeps at most this much of the tool list (an etcd object is at most ~1.5 MB). */
export const MAX_TOOLS_JSON_BYTES = 512 * 1024;
const MAX_DESCRIPTION = 2048;
const MAX_TITLE = 256;

export type Outcome =
  | { ok: true; discovery: Discovery; tools: McpToolInfo[] }
  | { ok: false; reason: string; message: string };

function condition(
  prev: Condition[] | undefined,
  c: Omit<Condition, 'lastTransitionTime'>,
  now: Date,
): Condition {
  const before = prev?.find((p) => p.type === c.type);
  const same = before?.status === c.status && before.lastTransitionTime;
  return { ...c, lastTransitionTime: same ? before.lastTransitionTime : now.toISOString() };
}

const HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;

/** What the status keeps of one tool: known fields of the right type, capped text. */
function keep(t: WireTool): McpToolInfo {
  const out: McpToolInfo = { name: boundedText(t.name, MAX_TITLE) };
  if (typeof t.title === 'string') out.title = boundedText(t.title, MAX_TITLE);
  if (typeof t.description === 'string') out.description = boundedText(t.description, MAX_DESCRIPTION);
  if (t.inputSchema && typeof t.inputSchema === 'object' && !Array.isArray(t.inputSchema))
    out.inputSchema = t.inputSchema;
  const a = t.annotations;
  if (a && typeof a === 'object') {
    const hints: NonNullable<McpToolInfo['annotations']> = {};
    if (typeof a.title === 'string') hints.title = boundedText(a.title, MAX_TITLE);
    for (const h of HINTS) if (typeof a[h] === 'boolean') hints[h] = a[h] as boolean;
    if (Object.keys(hints).length) out.annotations = hints;
  }
  return out;
}

/** The tools as the status keeps them, or why they do not fit. */
export function statusTools(d: Discovery): { tools: McpToolInfo[] } | { reason: string; message: string } {
  const tools = d.tools.map(keep);
  const bytes = Buffer.byteLength(JSON.stringify(tools));
  if (bytes > MAX_TOOLS_JSON_BYTES)
    return {
      reason: 'TooManyTools',
      message: `the tool list is ${Math.ceil(bytes / 1024)} KiB of names, descriptions and schemas; the status keeps at most ${MAX_TOOLS_JSON_BYTES / 1024} KiB`,
    };
  return { tools };
}

/** The address could not be resolved (Service, port or header Secret missing): nothing is called. */
export function unresolvedStatus(s: MCPServer, reason: string, message: string, now: Date) {
  const prev = s.status?.conditions;
  return {
    phase: 'error',
    message,
    observedGeneration: s.metadata.generation,
    conditions: [
      condition(
        prev,
        { type: 'Available', status: 'False', reason, message, observedGeneration: s.metadata.generation },
        now,
      ),
      condition(prev, { type: 'Discovering', status: 'False', reason: 'AddressNotResolved', message }, now),
    ],
  };
}

/** A discovery under way (written only when it outlasts a moment). */
export function discoveringStatus(s: MCPServer, address: string, now: Date) {
  const prev = s.status?.conditions;
  const message = `listing the tools of ${address}`;
  const available = prev?.find((c) => c.type === 'Available');
  return {
    lastResolvedAddress: address,
    conditions: [
      ...(available ? [available] : []),
      condition(prev, { type: 'Discovering', status: 'True', reason: 'Listing', message }, now),
    ],
  };
}

/** The outcome of a discovery. */
export function discoveredStatus(s: MCPServer, address: string, o: Outcome, now: Date) {
  const prev = s.status?.conditions;
  const generation = s.metadata.generation;
  if (!o.ok)
    return {
      phase: 'error',
      lastResolvedAddress: address,
      message: o.message,
      observedGeneration: generation,
      conditions: [
        condition(
          prev,
          {
            type: 'Available',
            status: 'False',
            reason: o.reason,
            message: o.message,
            observedGeneration: generation,
          },
          now,
        ),
        condition(
          prev,
          { type: 'Discovering', status: 'False', reason: 'DiscoveryFailed', message: o.message },
          now,
        ),
      ],
    };
  const { discovery: d, tools } = o;
  const message = `${tools.length} tool${tools.length === 1 ? '' : 's'} listed over MCP ${d.protocolVersion}`;
  return {
    phase: 'ready',
    lastResolvedAddress: address,
    message,
    protocolVersion: d.protocolVersion,
    serverInfo: d.serverInfo ? { name: d.serverInfo.name, version: d.serverInfo.version } : null,
    toolCount: tools.length,
    tools,
    lastDiscoveryTime: now.toISOString(),
    observedGeneration: generation,
    conditions: [
      condition(
        prev,
        { type: 'Available', status: 'True', reason: 'ToolsListed', message, observedGeneration: generation },
        now,
      ),
      condition(prev, { type: 'Discovering', status: 'False', reason: 'DiscoverySucceeded', message }, now),
    ],
  };
}
