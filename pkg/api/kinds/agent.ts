import { z } from 'zod';
import { commonStatusSchema, nameSchema } from '../common.ts';
import { ageColumn, type KindDef, type Resource } from '../kind-def.ts';
import { approvalPolicySchema, BUILTIN_TOOLS } from './approval.ts';
import { mcpServerRefSchema } from './mcpserver.ts';

/** What a model accepts as a function name (OpenAI's rule): the target of a rename. */
export const FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * One entry of an Agent's tools: a Tool by name, tools of an MCPServer (all, or those named),
 * optionally offered to the model under other names, or a built-in tool (ask_user); each with an
 * optional approval policy (docs/approvals.md).
 */
export const agentToolRefSchema = z
  .object({
    name: nameSchema.optional().describe('Tool name in the same namespace (or use mcpServerRef)'),
    mcpServerRef: mcpServerRefSchema
      .optional()
      .describe('An MCPServer whose tools the agent may call (all of them unless toolNames says which)'),
    toolNames: z
      .array(z.string().min(1).max(256))
      .max(256)
      .optional()
      .describe('With mcpServerRef: only these tools of the server (names as the server lists them)'),
    rename: z
      .record(z.string(), z.string().regex(FUNCTION_NAME, 'must match ^[a-zA-Z0-9_-]{1,64}$'))
      .optional()
      .describe(
        "With mcpServerRef: names the model sees instead of the server's, as {serverToolName: newName}; newName matches ^[a-zA-Z0-9_-]{1,64}$",
      ),
    builtin: z
      .enum(BUILTIN_TOOLS)
      .optional()
      .describe('A built-in tool: ask_user lets the model ask the human a question and wait for the answer'),
    approval: approvalPolicySchema
      .optional()
      .describe(
        "Approval policy of this entry's calls; fields left out come from the Tool's spec.approval, then the defaults",
      ),
  })
  .refine((t) => [t.name, t.mcpServerRef, t.builtin].filter((x) => x !== undefined).length === 1, {
    message: 'a tool entry needs exactly one of name, mcpServerRef or builtin',
  })
  .refine((t) => !!t.mcpServerRef || (t.toolNames === undefined && t.rename === undefined), {
    message: 'toolNames and rename go with mcpServerRef',
  })
  .meta({
    'x-kubernetes-validations': [
      {
        rule: '(has(self.name) ? 1 : 0) + (has(self.mcpServerRef) ? 1 : 0) + (has(self.builtin) ? 1 : 0) == 1',
        message: 'a tool entry needs exactly one of name, mcpServerRef or builtin',
      },
      {
        rule: 'has(self.mcpServerRef) || (!has(self.toolNames) && !has(self.rename))',
        message: 'toolNames and rename go with mcpServerRef',
      },
    ],
  });
export type AgentToolRef = z.infer<typeof agentToolRefSchema>;

export const agentSpecSchema = z.object({
  description: z.string().optional().describe('What the agent does; shown to teams and in listings'),
  prompt: z.string().min(1).describe('System prompt'),
  modelRef: z
    .object({ name: nameSchema.describe('Model name in the same namespace') })
    .optional()
    .describe('Model to use; defaults to the Model named "default"'),
  tools: z
    .array(agentToolRefSchema)
    .optional()
    .describe('Tools the agent may call: Tools by name, tools of MCPServers, built-in tools'),
  maxTurns: z.number().int().min(1).max(100).optional().describe('Tool-calling turn limit (default 10)'),
  outputSchema: z
    .record(z.string(), z.unknown())
    .optional()
    .describe(
      'JSON Schema the final answer must satisfy: the model is asked for JSON (response_format json_schema), the answer validated, one repair round, else the Query ends InvalidOutput',
    )
    .meta({ 'x-kubernetes-preserve-unknown-fields': true }),
});
export const agentStatusSchema = commonStatusSchema;

export type AgentSpec = z.infer<typeof agentSpecSchema>;
export type Agent = Resource<AgentSpec, z.infer<typeof agentStatusSchema>>;

export const agentKind: KindDef = {
  kind: 'Agent',
  description:
    'An LLM agent: a system prompt, a Model and the Tools it may call. Target of a Query as agent/<name>.',
  plural: 'agents',
  singular: 'agent',
  shortNames: ['agt'],
  spec: agentSpecSchema,
  status: agentStatusSchema,
  printerColumns: [{ name: 'Model', type: 'string', jsonPath: '.spec.modelRef.name' }, ageColumn],
};
