import { z } from 'zod';
import { conditionSchema, durationSchema, localObjectRefSchema, nameSchema } from '../common.ts';
import { ageColumn, type KindDef, type Resource } from '../kind-def.ts';

export const TARGET_TYPES = ['agent', 'team', 'model', 'tool'] as const;
export type TargetType = (typeof TARGET_TYPES)[number];
export const QUERY_PHASES = ['pending', 'running', 'done', 'error', 'canceled'] as const;
export type QueryPhase = (typeof QUERY_PHASES)[number];
export const TERMINAL_PHASES: readonly QueryPhase[] = ['done', 'error', 'canceled'];

export const chatMessageSchema = z.object({
  role: z.enum(['system', 'user', 'assistant', 'tool']),
  content: z.string(),
  name: z.string().optional(),
});
export type ChatMessage = z.infer<typeof chatMessageSchema>;

export const targetSchema = z.object({ type: z.enum(TARGET_TYPES), name: nameSchema });
export type Target = z.infer<typeof targetSchema>;

/**
 * A string, or a whole message history. Kubernetes cannot express the union structurally and CEL
 * cannot see untyped fields, so the API server only requires that input is present; its shape is
 * checked by this schema in the API service and by the engine, which fails a malformed Query.
 */
export const queryInputSchema = z
  .union([z.string(), z.array(chatMessageSchema).min(1)])
  .meta({ 'x-kubernetes-preserve-unknown-fields': true });

export const querySpecSchema = z.object({
  input: queryInputSchema,
  target: targetSchema,
  memory: localObjectRefSchema.optional().describe('Memory for history; defaults to the Memory "default"'),
  sessionId: z.string().optional(),
  conversationId: z.string().optional(),
  ttl: durationSchema.default('720h').describe('Lifetime after completion; broker data expires with it'),
  timeout: durationSchema.default('5m'),
  cancel: z.boolean().default(false),
});

export const tokenUsageSchema = z.object({
  promptTokens: z.number().int().min(0),
  completionTokens: z.number().int().min(0),
  totalTokens: z.number().int().min(0),
});
export type TokenUsage = z.infer<typeof tokenUsageSchema>;

export const queryStatusSchema = z.object({
  phase: z.enum(QUERY_PHASES).optional(),
  message: z.string().optional(),
  response: z.object({ target: targetSchema.optional(), content: z.string() }).optional(),
  tokenUsage: tokenUsageSchema.optional(),
  conversationId: z.string().optional(),
  a2a: z.object({ contextId: z.string().optional() }).optional(),
  conditions: z.array(conditionSchema).optional(),
  startTime: z.string().optional(),
  completionTime: z.string().optional(),
  duration: z.string().optional(),
  observedGeneration: z.number().int().optional(),
});

export type QuerySpec = z.infer<typeof querySpecSchema>;
export type QueryStatus = z.infer<typeof queryStatusSchema>;
export type Query = Resource<QuerySpec, QueryStatus>;

export const queryKind: KindDef = {
  kind: 'Query',
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
