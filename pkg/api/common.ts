import { z } from 'zod';

/**
 * Building blocks shared by several kinds. Every schema here must stay "structural" in the
 * Kubernetes sense (one type per node, no unions) unless it is marked preserve-unknown-fields,
 * because crds/ is generated from these schemas.
 */

/** Go duration syntax as the API server and kubectl users write it, e.g. `720h`, `5m`, `1h30m`. */
export const durationSchema = z
  .string()
  .regex(/^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$/, 'must be a duration such as 30s, 5m or 720h');

export const nameSchema = z.string().min(1).max(253);

export const localObjectRefSchema = z.object({ name: nameSchema });

export const secretKeyRefSchema = z.object({
  name: nameSchema.describe('Secret name in the same namespace'),
  key: z.string().min(1).describe('Key inside the Secret'),
});

export const headerSchema = z.object({
  name: z.string().min(1),
  value: z.string().optional(),
  valueFrom: z.object({ secretKeyRef: secretKeyRefSchema }).optional(),
});

export const conditionSchema = z.object({
  type: z.string(),
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z.string().optional(),
  message: z.string().optional(),
  lastTransitionTime: z.string().optional(),
  observedGeneration: z.number().int().optional(),
});
export type Condition = z.infer<typeof conditionSchema>;

export const serviceRefSchema = z.object({
  name: nameSchema,
  namespace: z.string().optional().describe('Defaults to the namespace of the referring object'),
  port: z.number().int().min(1).max(65535),
  path: z.string().optional().describe('Path appended to the service URL, e.g. /v1'),
});

/** An address given directly or resolved from an in-cluster Service (Memory, Evaluator). */
export const addressSchema = z
  .object({
    value: z.string().min(1).optional().describe('Direct URL of the service'),
    valueFrom: z.object({ serviceRef: serviceRefSchema }).optional(),
  })
  .meta({
    'x-kubernetes-validations': [
      {
        rule: 'has(self.value) != has(self.valueFrom)',
        message: 'address needs exactly one of value or valueFrom.serviceRef',
      },
    ],
  });
export type Address = z.infer<typeof addressSchema>;

export const commonStatusSchema = z.object({
  phase: z.string().optional(),
  message: z.string().optional(),
  conditions: z.array(conditionSchema).optional(),
  observedGeneration: z.number().int().optional(),
});

/** Object metadata as users send it; the API server owns the rest. */
export const objectMetaSchema = z
  .object({
    name: nameSchema.optional(),
    generateName: z.string().optional(),
    namespace: z.string().optional(),
    labels: z.record(z.string(), z.string()).optional(),
    annotations: z.record(z.string(), z.string()).optional(),
    uid: z.string().optional(),
    resourceVersion: z.string().optional(),
    generation: z.number().optional(),
    creationTimestamp: z.string().optional(),
    deletionTimestamp: z.string().optional(),
    finalizers: z.array(z.string()).optional(),
  })
  .passthrough();
export type ObjectMeta = z.infer<typeof objectMetaSchema>;
