import { z } from 'zod';
import { addressSchema, commonStatusSchema, headerSchema } from '../common.ts';
import { ageColumn, type KindDef, type Resource } from '../kind-def.ts';

export const memorySpecSchema = z.object({
  address: addressSchema,
  headers: z.array(headerSchema).optional().describe('Headers sent with every memory call'),
});
export const memoryStatusSchema = commonStatusSchema.extend({
  phase: z.enum(['ready', 'error']).optional(),
  lastResolvedAddress: z.string().optional(),
});

export type MemorySpec = z.infer<typeof memorySpecSchema>;
export type MemoryStatus = z.infer<typeof memoryStatusSchema>;
export type Memory = Resource<MemorySpec, MemoryStatus>;

export const memoryKind: KindDef = {
  kind: 'Memory',
  plural: 'memories',
  singular: 'memory',
  shortNames: ['mem'],
  spec: memorySpecSchema,
  status: memoryStatusSchema,
  printerColumns: [
    { name: 'Address', type: 'string', jsonPath: '.status.lastResolvedAddress' },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    ageColumn,
  ],
};
