import { z } from 'zod';
import { commonStatusSchema, durationSchema, headerSchema } from '../common.ts';
import { ageColumn, type KindDef, type Resource } from '../kind-def.ts';

export const toolSpecSchema = z.object({
  description: z.string().optional(),
  inputSchema: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('JSON Schema of the arguments, offered to models for function calling')
    .meta({ 'x-kubernetes-preserve-unknown-fields': true }),
  http: z.object({
    url: z.string().min(1).describe('URL called with the input'),
    method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).default('POST'),
    headers: z.array(headerSchema).optional(),
    timeout: durationSchema.optional().describe('Call timeout (default 30s)'),
  }),
});
export const toolStatusSchema = commonStatusSchema;

export type ToolSpec = z.infer<typeof toolSpecSchema>;
export type Tool = Resource<ToolSpec, z.infer<typeof toolStatusSchema>>;

export const toolKind: KindDef = {
  kind: 'Tool',
  plural: 'tools',
  singular: 'tool',
  shortNames: ['tl'],
  spec: toolSpecSchema,
  status: toolStatusSchema,
  printerColumns: [
    { name: 'Method', type: 'string', jsonPath: '.spec.http.method' },
    { name: 'URL', type: 'string', jsonPath: '.spec.http.url' },
    ageColumn,
  ],
};
