import { z } from 'zod';
import { commonStatusSchema, nameSchema } from '../common.ts';
import { ageColumn, type KindDef, type Resource } from '../kind-def.ts';

export const agentSpecSchema = z.object({
  description: z.string().optional().describe('What the agent does; shown to teams and in listings'),
  prompt: z.string().min(1).describe('System prompt'),
  modelRef: z
    .object({ name: nameSchema.describe('Model name in the same namespace') })
    .optional()
    .describe('Model to use; defaults to the Model named "default"'),
  tools: z
    .array(z.object({ name: nameSchema.describe('Tool name in the same namespace') }))
    .optional()
    .describe('Tools the agent may call'),
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
