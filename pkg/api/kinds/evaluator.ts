import { z } from 'zod';
import { addressSchema, commonStatusSchema } from '../common.ts';
import { ageColumn, type KindDef, type Resource } from '../kind-def.ts';

export const evaluatorSpecSchema = z.object({
  description: z.string().optional(),
  address: addressSchema,
});
export const evaluatorStatusSchema = commonStatusSchema.extend({
  phase: z.enum(['ready', 'error']).optional(),
  lastResolvedAddress: z.string().optional(),
});

export type EvaluatorSpec = z.infer<typeof evaluatorSpecSchema>;
export type Evaluator = Resource<EvaluatorSpec, z.infer<typeof evaluatorStatusSchema>>;

export const evaluatorKind: KindDef = {
  kind: 'Evaluator',
  plural: 'evaluators',
  singular: 'evaluator',
  shortNames: ['evr'],
  spec: evaluatorSpecSchema,
  status: evaluatorStatusSchema,
  printerColumns: [
    { name: 'Address', type: 'string', jsonPath: '.status.lastResolvedAddress' },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    ageColumn,
  ],
};
