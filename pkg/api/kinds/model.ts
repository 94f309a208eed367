import { z } from 'zod';
import { commonStatusSchema, headerSchema, secretKeyRefSchema } from '../common.ts';
import { ageColumn, type KindDef, type Resource } from '../kind-def.ts';

/** https anywhere, plain http only for in-cluster Service addresses (the spec's transport rule). */
export const MODEL_URL_RULE =
  "self.startsWith('https://') || self.matches('^http://[A-Za-z0-9.-]+[.]svc[.]cluster[.]local(:[0-9]+)?(/.*)?$')";
export const MODEL_URL_MESSAGE = 'baseUrl must be https:// or an http://<service>.svc.cluster.local address';

export const modelSpecSchema = z.object({
  type: z.enum(['openai', 'azure']).default('openai'),
  model: z.string().min(1).describe('Provider model name, e.g. gpt-4o-mini'),
  baseUrl: z
    .string()
    .min(1)
    .describe('OpenAI-compatible base URL, e.g. https://api.openai.com/v1')
    .meta({ 'x-kubernetes-validations': [{ rule: MODEL_URL_RULE, message: MODEL_URL_MESSAGE }] }),
  apiKey: z.object({ secretKeyRef: secretKeyRefSchema }).optional(),
  apiVersion: z.string().optional().describe('Azure OpenAI api-version (type azure only)'),
  headers: z.array(headerSchema).optional().describe('Extra headers sent to the provider'),
});
export const modelStatusSchema = commonStatusSchema;

export type ModelSpec = z.infer<typeof modelSpecSchema>;
export type Model = Resource<ModelSpec, z.infer<typeof modelStatusSchema>>;

export const modelKind: KindDef = {
  kind: 'Model',
  plural: 'models',
  singular: 'model',
  shortNames: ['mdl'],
  spec: modelSpecSchema,
  status: modelStatusSchema,
  printerColumns: [
    { name: 'Type', type: 'string', jsonPath: '.spec.type' },
    { name: 'Model', type: 'string', jsonPath: '.spec.model' },
    { name: 'Base URL', type: 'string', jsonPath: '.spec.baseUrl', priority: 1 },
    ageColumn,
  ],
};
