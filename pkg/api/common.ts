import { z } from 'zod';
import { SECRET_USAGE_ENGINE, SECRET_USAGE_LABEL } from './secret-usage.ts';

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
  name: nameSchema.describe(
    `Secret name in the same namespace; the engine uses only Secrets labelled ${SECRET_USAGE_LABEL}=${SECRET_USAGE_ENGINE}`,
  ),
  key: z.string().min(1).describe('Key inside the Secret'),
});

export const headerSchema = z.object({
  name: z.string().min(1).describe('Header name'),
  value: z.string().optional().describe('Header value given directly'),
  valueFrom: z
    .object({
      secretKeyRef: secretKeyRefSchema.describe('Secret key whose value is the header value (never logged)'),
    })
    .optional()
    .describe('Header value read from a Secret'),
});

export const conditionSchema = z.object({
  type: z.string().describe('Condition type, e.g. Ready or Completed; unique in the list'),
  status: z.enum(['True', 'False', 'Unknown']).describe('Whether the condition holds'),
  reason: z.string().optional().describe('Machine-readable CamelCase reason of the last transition'),
  message: z.string().optional().describe('Human-readable detail of the last transition'),
  lastTransitionTime: z
    .string()
    .optional()
    .describe('When status last changed (RFC 3339)')
    .meta({ format: 'date-time' }),
  observedGeneration: z.number().int().optional().describe('metadata.generation the condition was set for'),
});

/** Conditions as Kubernetes lists them: one entry per type (a map list keyed by `type`). */
export const conditionsSchema = z
  .array(conditionSchema)
  .describe('Latest observations of the object, one per condition type')
  .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] });
export type Condition = z.infer<typeof conditionSchema>;

export const serviceRefSchema = z.object({
  name: nameSchema.describe('Service name'),
  namespace: z.string().optional().describe('Defaults to the namespace of the referring object'),
  port: z.number().int().min(1).max(65535).describe('Service port'),
  path: z.string().optional().describe('Path appended to the service URL, e.g. /v1'),
});

/** An address given directly or resolved from an in-cluster Service (Memory, Evaluator). */
export const addressSchema = z
  .object({
    value: z.string().min(1).optional().describe('Direct URL of the service'),
    valueFrom: z
      .object({
        serviceRef: serviceRefSchema.describe(
          'In-cluster Service resolved to http://<name>.<namespace>.svc.cluster.local:<port><path>',
        ),
      })
      .optional()
      .describe('Address resolved from a Service'),
  })
  .describe('Where the service is: exactly one of value or valueFrom.serviceRef')
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
  phase: z.string().optional().describe('Lifecycle phase the controller last observed'),
  message: z.string().optional().describe('Human-readable detail of the phase, e.g. why it is in error'),
  conditions: conditionsSchema.optional(),
  observedGeneration: z.number().int().optional().describe('metadata.generation the status was written for'),
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
