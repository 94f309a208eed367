import { z } from 'zod';
import { commonStatusSchema, localObjectRefSchema } from '../common.ts';
import { ageColumn, type KindDef, type Resource } from '../kind-def.ts';

export const evaluationSpecSchema = z.object({
  type: z.enum(['direct']).default('direct'),
  evaluator: localObjectRefSchema,
  config: z.object({ input: z.string(), output: z.string() }),
  cancel: z.boolean().default(false),
});
export const evaluationStatusSchema = commonStatusSchema.extend({
  phase: z.enum(['pending', 'running', 'done', 'error', 'canceled']).optional(),
  score: z.number().optional(),
  passed: z.boolean().optional(),
});

export type EvaluationSpec = z.infer<typeof evaluationSpecSchema>;
export type Evaluation = Resource<EvaluationSpec, z.infer<typeof evaluationStatusSchema>>;

export const evaluationKind: KindDef = {
  kind: 'Evaluation',
  plural: 'evaluations',
  singular: 'evaluation',
  shortNames: ['evl'],
  spec: evaluationSpecSchema,
  status: evaluationStatusSchema,
  printerColumns: [
    { name: 'Evaluator', type: 'string', jsonPath: '.spec.evaluator.name' },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'Score', type: 'number', jsonPath: '.status.score' },
    ageColumn,
  ],
};
