import { z } from 'zod';
import { conditionsSchema, durationSchema, nameSchema } from '../common.ts';
import { ageColumn, type KindDef, type Resource } from '../kind-def.ts';
import { evaluatorParametersSchema } from './evaluator.ts';

export const EVALUATION_TYPES = ['direct', 'query'] as const;
export type EvaluationType = (typeof EVALUATION_TYPES)[number];
export const EVALUATION_PHASES = ['pending', 'running', 'done', 'error', 'canceled'] as const;
export type EvaluationPhase = (typeof EVALUATION_PHASES)[number];
export const EVALUATION_TERMINAL_PHASES: readonly EvaluationPhase[] = ['done', 'error', 'canceled'];

/**
 * What each type needs, enforced by the API server (CEL) so `kubectl apply` refuses an incomplete
 * Evaluation instead of the controller failing it later; the same rules are checked in zod (API
 * service bodies) below.
 */
const TYPE_RULES = [
  {
    rule: "self.type != 'direct' || has(self.config.input)",
    message: 'a direct evaluation needs config.input',
  },
  {
    rule: "self.type != 'direct' || has(self.config.output)",
    message: 'a direct evaluation needs config.output',
  },
  {
    rule: "self.type != 'query' || has(self.config.queryRef)",
    message: 'a query evaluation needs config.queryRef.name',
  },
];

export const evaluationConfigSchema = z
  .object({
    input: z.string().optional().describe('direct: the input the output answers, e.g. the question'),
    output: z.string().optional().describe('direct: the output to score, e.g. the answer'),
    queryRef: z
      .object({ name: nameSchema.describe('Query name in the same namespace') })
      .optional()
      .describe('query: the Query whose input and response are scored, once it is done'),
  })
  .describe('What to evaluate: input and output (type direct), or a Query (type query)');

export const evaluationSpecSchema = z
  .object({
    type: z
      .enum(EVALUATION_TYPES)
      .default('direct')
      .describe('direct: score config.input/config.output; query: score the Query config.queryRef'),
    evaluator: z
      .object({
        name: nameSchema.describe('Evaluator name in the same namespace'),
        parameters: evaluatorParametersSchema
          .optional()
          .describe("Parameters of this evaluation's call, over the Evaluator's spec.parameters"),
      })
      .describe('The Evaluator that scores'),
    config: evaluationConfigSchema,
    timeout: durationSchema
      .default('5m')
      .describe('Longest the evaluation may take, retries included, before it ends in error'),
    cancel: z.boolean().default(false).describe('Set to true to cancel a pending or running evaluation'),
  })
  .meta({ 'x-kubernetes-validations': TYPE_RULES })
  .superRefine((spec, ctx) => {
    for (const issue of evaluationTypeIssues(spec)) ctx.addIssue({ code: 'custom', ...issue });
  });

/** TYPE_RULES in TypeScript, tolerant of a malformed spec (API bodies report every issue at once). */
export function evaluationTypeIssues(spec: {
  type?: unknown;
  config?: unknown;
}): Array<{ path: string[]; message: string }> {
  // `spec` may be anything a client sent (null, a string): the refinement runs whatever the base check said.
  const c = (spec?.config && typeof spec.config === 'object' ? spec.config : {}) as Record<string, unknown>;
  if (spec?.type === 'query') {
    if (c.queryRef) return [];
    return [{ path: ['config', 'queryRef'], message: 'a query evaluation needs config.queryRef.name' }];
  }
  // direct, the default (an unknown type is reported by the enum and checked as the default here)
  return (['input', 'output'] as const)
    .filter((f) => c[f] === undefined)
    .map((f) => ({ path: ['config', f], message: `a direct evaluation needs config.${f}` }));
}

export const evaluationStatusSchema = z.object({
  phase: z.enum(EVALUATION_PHASES).optional().describe('pending → running → done | error | canceled'),
  score: z.number().min(0).max(1).optional().describe("The evaluator's score, from 0 (worst) to 1 (best)"),
  passed: z.boolean().optional().describe('Whether the evaluator judged the output acceptable'),
  reasoning: z
    .string()
    .optional()
    .describe("The evaluator's explanation of the score (cut to 4096 characters)"),
  metrics: z
    .record(z.string(), z.number())
    .optional()
    .describe('Further named figures the evaluator returned, e.g. latency or similarity'),
  message: z
    .string()
    .optional()
    .describe('What the evaluation is waiting for, why it is retrying, or why it ended in error'),
  conditions: conditionsSchema.optional(),
  startTime: z.string().optional().describe('When the evaluator was first called (RFC 3339)').meta({
    format: 'date-time',
  }),
  completionTime: z
    .string()
    .optional()
    .describe('When the evaluation ended (RFC 3339)')
    .meta({ format: 'date-time' }),
  duration: z.string().optional().describe('How long the evaluation took, e.g. 1.2s'),
  observedGeneration: z.number().int().optional().describe('metadata.generation the status was written for'),
});

export type EvaluationSpec = z.infer<typeof evaluationSpecSchema>;
export type EvaluationStatus = z.infer<typeof evaluationStatusSchema>;
export type Evaluation = Resource<EvaluationSpec, EvaluationStatus>;

export const evaluationKind: KindDef = {
  kind: 'Evaluation',
  description:
    'One scoring of an output by an Evaluator: direct (input and output given) or of a finished Query; the controller calls the evaluator once and records score and verdict in status.',
  plural: 'evaluations',
  singular: 'evaluation',
  shortNames: ['evl'],
  spec: evaluationSpecSchema,
  status: evaluationStatusSchema,
  printerColumns: [
    { name: 'Type', type: 'string', jsonPath: '.spec.type' },
    { name: 'Evaluator', type: 'string', jsonPath: '.spec.evaluator.name' },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'Score', type: 'number', jsonPath: '.status.score' },
    { name: 'Passed', type: 'boolean', jsonPath: '.status.passed' },
    ageColumn,
  ],
};
