import { z } from 'zod';
import { commonStatusSchema, nameSchema } from '../common.ts';
import { ageColumn, type KindDef, type Resource } from '../kind-def.ts';
import { mcpServerRefSchema } from './mcpserver.ts';

/** What a model accepts as a function name (OpenAI's rule): the target of a rename. */
export const FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * One entry of an Agent's tools: a Tool by name, or tools of an MCPServer (all, or those named),
 * optionally offered to the model under other names.
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
  })
  .refine((t) => !!t.name !== !!t.mcpServerRef, {
    message: 'a tool entry needs exactly one of name or mcpServerRef',
  })
  .refine((t) => !!t.mcpServerRef || (t.toolNames === undefined && t.rename === undefined), {
    message: 'toolNames and rename go with mcpServerRef',
  })
  .meta({
    'x-kubernetes-validations': [
      {
        rule: 'has(self.name) != has(self.mcpServerRef)',
        message: 'a tool entry needs exactly one of name or mcpServerRef',
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
    .describe('Tools the agent may call: Tools by name, and tools of MCPServers'),
  maxTurns: z.number().int().min(1).max(100).optional().describe('Tool-calling turn limit (default 10)'),
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
