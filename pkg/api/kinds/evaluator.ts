import { z } from 'zod';
import { addressSchema, conditionsSchema, headerSchema } from '../common.ts';
import { ageColumn, type KindDef, type Resource } from '../kind-def.ts';

/** Named string settings an evaluator reads from the request, e.g. `{mode: contains, expected: Paris}`. */
export const evaluatorParametersSchema = z.record(z.string(), z.string());
export type EvaluatorParameters = z.infer<typeof evaluatorParametersSchema>;

export const evaluatorSpecSchema = z.object({
  description: z.string().optional().describe('What the evaluator judges, for people browsing evaluators'),
  address: addressSchema.describe(
    'Where the evaluator is: a URL, or an in-cluster Service (as a Memory); Evaluations call POST {address}/evaluate',
  ),
  headers: z
    .array(headerSchema)
    .optional()
    .describe('Headers sent with every evaluate call (e.g. an Authorization header from a Secret)'),
  parameters: evaluatorParametersSchema
    .optional()
    .describe('Default parameters of every evaluate call; an Evaluation may override each one'),
});
export const evaluatorStatusSchema = z.object({
  phase: z
    .enum(['ready', 'error'])
    .optional()
    .describe('ready when the address and header Secrets resolved, error otherwise'),
  lastResolvedAddress: z
    .string()
    .optional()
    .describe('The URL the address last resolved to; evaluate calls go to <this>/evaluate'),
  message: z.string().optional().describe('Human-readable detail of the phase, e.g. why it is in error'),
  conditions: conditionsSchema.optional(),
  observedGeneration: z.number().int().optional().describe('metadata.generation the status was written for'),
});

export type EvaluatorSpec = z.infer<typeof evaluatorSpecSchema>;
export type EvaluatorStatus = z.infer<typeof evaluatorStatusSchema>;
export type Evaluator = Resource<EvaluatorSpec, EvaluatorStatus>;

export const evaluatorKind: KindDef = {
  kind: 'Evaluator',
  description:
    'An HTTP service that scores outputs: POST {address}/evaluate with {type, input, output, parameters?, query?} answers {score 0..1, passed, reasoning?, metrics?} (docs/evaluations.md).',
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
