import { z } from 'zod';
import { conditionsSchema, durationSchema, nameSchema } from '../common.ts';
import { ageColumn, type KindDef, type Resource } from '../kind-def.ts';
import { approvalDecisionSchema, pendingApprovalSchema } from './approval.ts';

export const TARGET_TYPES = ['agent', 'team', 'model', 'tool'] as const;
export type TargetType = (typeof TARGET_TYPES)[number];
/** `input-required`: waiting for a human decision (status.pendingApprovals); not terminal. */
export const QUERY_PHASES = ['pending', 'running', 'input-required', 'done', 'error', 'canceled'] as const;
export type QueryPhase = (typeof QUERY_PHASES)[number];
export const TERMINAL_PHASES: readonly QueryPhase[] = ['done', 'error', 'canceled'];

export const chatMessageSchema = z.object({
  role: z.enum(['system', 'user', 'assistant', 'tool']),
  content: z.string(),
  name: z.string().optional(),
});
export type ChatMessage = z.infer<typeof chatMessageSchema>;

export const targetSchema = z.object({
  type: z.enum(TARGET_TYPES).describe('Kind of the target: agent, team, model or tool'),
  name: nameSchema.describe('Name of the Agent, Team, Model or Tool in the same namespace'),
});
export type Target = z.infer<typeof targetSchema>;

/**
 * A string, or a whole message history. Kubernetes cannot express the union structurally and CEL
 * cannot see untyped fields, so the API server only requires that input is present; its shape is
 * checked by this schema in the API service and by the engine, which fails a malformed Query.
 */
export const queryInputSchema = z
  .union([z.string(), z.array(chatMessageSchema).min(1)])
  .describe(
    'The question: a string, or a message history [{role, content, name?}] whose last message is answered',
  )
  .meta({ 'x-kubernetes-preserve-unknown-fields': true });

export const querySpecSchema = z.object({
  input: queryInputSchema,
  target: targetSchema.describe('What answers the query').meta({
    'x-kubernetes-validations': [
      {
        rule: "self.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",
        message: 'target.name must be a lowercase DNS name (the name of an Agent, Team, Model or Tool)',
      },
    ],
  }),
  memory: z
    .object({ name: nameSchema.describe('Memory name in the same namespace') })
    .optional()
    .describe('Memory for history; defaults to the Memory "default"'),
  sessionId: z.string().optional().describe('Session the query belongs to (groups queries in the broker)'),
  conversationId: z
    .string()
    .optional()
    .describe('Conversation to continue; the memory assigns one when empty (see status.conversationId)'),
  ttl: durationSchema.default('720h').describe('Lifetime after completion; broker data expires with it'),
  timeout: durationSchema.default('5m').describe('Longest the run may take before it ends in error'),
  cancel: z
    .boolean()
    .default(false)
    .describe('Set to true to cancel a pending, running or input-required query'),
  responseFormat: z
    .record(z.string(), z.unknown())
    .optional()
    .describe(
      "OpenAI response_format for the target's answer ({type: text|json_object|json_schema, json_schema?}); /compat/v1 passes the request's here. Model and agent targets; an Agent's outputSchema wins",
    )
    .meta({ 'x-kubernetes-preserve-unknown-fields': true }),
});

export const tokenUsageSchema = z.object({
  promptTokens: z.number().int().min(0).describe('Tokens sent to models, summed over every model call'),
  completionTokens: z.number().int().min(0).describe('Tokens models produced, summed over every model call'),
  totalTokens: z.number().int().min(0).describe('promptTokens + completionTokens'),
});
export type TokenUsage = z.infer<typeof tokenUsageSchema>;

export const queryStatusSchema = z.object({
  phase: z
    .enum(QUERY_PHASES)
    .optional()
    .describe('pending → running (⇄ input-required) → done | error | canceled'),
  message: z.string().optional().describe('Why the query ended in error or was canceled'),
  response: z
    .object({
      target: targetSchema.optional().describe('The target that answered'),
      content: z.string().describe('The answer'),
    })
    .optional()
    .describe('The answer of a done query'),
  tokenUsage: tokenUsageSchema.optional().describe('Tokens the run used'),
  conversationId: z.string().optional().describe('Conversation the run read and wrote in the memory'),
  a2a: z
    .object({ contextId: z.string().optional().describe('A2A context id of the run') })
    .optional()
    .describe('Agent-to-agent protocol details'),
  conditions: conditionsSchema.optional(),
  startTime: z.string().optional().describe('When the run started (RFC 3339)').meta({ format: 'date-time' }),
  completionTime: z
    .string()
    .optional()
    .describe('When the run ended (RFC 3339)')
    .meta({ format: 'date-time' }),
  duration: z.string().optional().describe('How long the run took, e.g. 1.2s'),
  observedGeneration: z.number().int().optional().describe('metadata.generation the status was written for'),
  pendingApprovals: z
    .array(pendingApprovalSchema)
    .optional()
    .describe('input-required: the tool calls and questions waiting for a decision'),
  approvals: z
    .array(approvalDecisionSchema)
    .optional()
    .describe('Every decision taken on this query, in order (kept after it ends)'),
  checkpoint: z
    .record(z.string(), z.unknown())
    .optional()
    .describe(
      'input-required: the engine’s state to resume from (the conversation so far); written by the controller only, capped (docs/approvals.md)',
    )
    .meta({ 'x-kubernetes-preserve-unknown-fields': true }),
});

export type QuerySpec = z.infer<typeof querySpecSchema>;
export type QueryStatus = z.infer<typeof queryStatusSchema>;
export type Query = Resource<QuerySpec, QueryStatus>;

export const queryKind: KindDef = {
  kind: 'Query',
  description:
    'One question to an agent, team, model or tool; the controller runs it once and records the answer in status.',
  plural: 'queries',
  singular: 'query',
  shortNames: ['qry'],
  spec: querySpecSchema,
  status: queryStatusSchema,
  printerColumns: [
    { name: 'Type', type: 'string', jsonPath: '.spec.target.type' },
    { name: 'Target', type: 'string', jsonPath: '.spec.target.name' },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'Duration', type: 'string', jsonPath: '.status.duration', priority: 1 },
    ageColumn,
  ],
};
