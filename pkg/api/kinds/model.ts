import { z } from 'zod';
import { commonStatusSchema, headerSchema, secretKeyRefSchema } from '../common.ts';
import { ageColumn, type KindDef, type Resource } from '../kind-def.ts';

/** https anywhere, plain http only for in-cluster Service addresses (the spec's transport rule). */
export const MODEL_URL_RULE =
  "self.startsWith('https://') || self.matches('^http://[A-Za-z0-9.-]+[.]svc[.]cluster[.]local(:[0-9]+)?(/.*)?$')";
export const MODEL_URL_MESSAGE = 'baseUrl must be https:// or an http://<service>.svc.cluster.local address';

export const modelSpecSchema = z
  .object({
    type: z
      .enum(['openai', 'azure', 'demo'])
      .default('openai')
      .describe(
        'Provider API: openai (any OpenAI-compatible server), azure (Azure OpenAI), or demo (the built-in deterministic demo model, answered inside the engine: no key, no network)',
      ),
    model: z.string().min(1).describe('Provider model name, e.g. gpt-4o-mini (any name for type demo)'),
    baseUrl: z
      .string()
      .min(1)
      .optional()
      .describe('OpenAI-compatible base URL, e.g. https://api.openai.com/v1 (required unless type is demo)')
      .meta({ 'x-kubernetes-validations': [{ rule: MODEL_URL_RULE, message: MODEL_URL_MESSAGE }] }),
    apiKey: z
      .object({ secretKeyRef: secretKeyRefSchema.describe('Secret and key of the API key (never logged)') })
      .optional()
      .describe('Secret key holding the provider API key, sent as a bearer token'),
    apiVersion: z.string().optional().describe('Azure OpenAI api-version (type azure only)'),
    headers: z.array(headerSchema).optional().describe('Extra headers sent to the provider'),
  })
  .refine((s) => s.type === 'demo' || !!s.baseUrl, {
    message: 'baseUrl is required unless type is demo',
    path: ['baseUrl'],
  })
  .meta({
    'x-kubernetes-validations': [
      {
        rule: "self.type == 'demo' || has(self.baseUrl)",
        message: 'baseUrl is required unless type is demo',
      },
    ],
  });
export const modelStatusSchema = commonStatusSchema;

/** The Model `berth up` creates: the built-in demo model, so a first run needs no key. */
export const DEMO_MODEL = { name: 'demo', spec: { type: 'demo' as const, model: 'berth-demo' } };

export type ModelSpec = z.infer<typeof modelSpecSchema>;
export type Model = Resource<ModelSpec, z.infer<typeof modelStatusSchema>>;

export const modelKind: KindDef = {
  kind: 'Model',
  description:
    'An LLM behind an OpenAI-compatible endpoint (or the built-in demo model). Target of a Query as model/<name>.',
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
