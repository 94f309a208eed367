/**
 * The tools `/mcp` offers, defined once for both SDKs (modern.ts registers them with
 * `@modelcontextprotocol/server` 2.x, legacy.ts with `@modelcontextprotocol/sdk` 1.x): their
 * schemas, descriptions and results as plain `CallToolResult` objects, which both accept.
 */
import { z } from 'zod';
import type { GatewayDeps } from '../deps.ts';
import { type InvokeOptions, invokeTarget, listTargets, ToolFailure } from './targets.ts';

/** The server's name and version in `initialize` / `server/discover` answers. */
export const serverInfo = (deps: GatewayDeps) => ({ name: 'berth', version: deps.version });

export const INSTRUCTIONS =
  'Berth runs agents, teams, models and tools of one Kubernetes namespace. list_targets names them ' +
  '("agent/<name>", "team/<name>", …); invoke_target runs one with your input and answers its result.';

/** An input as large as a chat completion's, well inside the body limit. */
const INPUT_MAX = 1_000_000;

export const listTargetsTool = {
  name: 'list_targets',
  config: {
    title: 'List targets',
    description:
      'The agents, teams, models and tools of this namespace, as ids "<type>/<name>" that invoke_target accepts.',
    inputSchema: z.object({}),
    outputSchema: z.object({ targets: z.array(z.string()).describe('ids such as "agent/assistant"') }),
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
} as const;

export const invokeTargetTool = {
  name: 'invoke_target',
  config: {
    title: 'Invoke a target',
    description:
      'Runs an agent, team, model or tool of this namespace with the input as the user message (a Query, as ' +
      'the chat API creates) and answers its result text. Progress notifications carry the answer as it streams.',
    inputSchema: z.object({
      target: z.string().min(1).max(300).describe('An id list_targets gives, e.g. "agent/assistant"'),
      input: z.string().max(INPUT_MAX).describe('The user message'),
      sessionId: z
        .string()
        .min(1)
        .max(253)
        .optional()
        .describe('Groups this call with others in a session (the Query spec.sessionId)'),
    }),
    annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
  },
} as const;

export type InvokeInput = z.infer<typeof invokeTargetTool.config.inputSchema>;

const text = (t: string) => [{ type: 'text' as const, text: t }];

/** A failure the model should read (ToolFailure) as an error result; anything else is the SDK's to answer. */
function failed(err: unknown) {
  if (err instanceof ToolFailure) return { content: text(err.message), isError: true };
  throw err;
}

export async function runListTargets(deps: GatewayDeps) {
  try {
    const targets = await listTargets(deps);
    return { content: text(targets.join('\n')), structuredContent: { targets } };
  } catch (err) {
    // A Kubernetes failure is the service's, not the model's: said, without the API server's detail.
    deps.logger.warn({ err: (err as Error).message }, 'MCP list_targets failed');
    return { content: text(`the targets could not be listed: ${(err as Error).message}`), isError: true };
  }
}

export async function runInvokeTarget(deps: GatewayDeps, args: InvokeInput, opts: InvokeOptions) {
  try {
    const { query, text: answer } = await invokeTarget(deps, args, opts);
    return { content: text(answer), _meta: { 'berth.dev/query': query } };
  } catch (err) {
    return failed(err);
  }
}

/** A progress callback for a request that carried a progress token, sending through `notify`. */
export interface ProgressNotification {
  method: 'notifications/progress';
  params: { progressToken: string | number; progress: number; message: string };
}

export function progressVia(
  token: string | number | undefined,
  notify: (n: ProgressNotification) => Promise<void>,
): InvokeOptions['progress'] {
  if (token === undefined) return undefined;
  return (progress, message) =>
    notify({ method: 'notifications/progress', params: { progressToken: token, progress, message } });
}
