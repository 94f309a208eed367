import { z } from 'zod';
import { addressSchema, commonStatusSchema, headerSchema } from '../common.ts';
import { ageColumn, type KindDef, type Resource } from '../kind-def.ts';

export const memorySpecSchema = z.object({
  address: addressSchema.describe('Where the memory service is: a URL, or an in-cluster Service'),
  headers: z.array(headerSchema).optional().describe('Headers sent with every memory call'),
});
export const memoryStatusSchema = commonStatusSchema.extend({
  phase: z.enum(['ready', 'error']).optional().describe('ready when the address resolved, error otherwise'),
  lastResolvedAddress: z.string().optional().describe('The URL the address last resolved to'),
});

export type MemorySpec = z.infer<typeof memorySpecSchema>;
export type MemoryStatus = z.infer<typeof memoryStatusSchema>;
export type Memory = Resource<MemorySpec, MemoryStatus>;

export const memoryKind: KindDef = {
  kind: 'Memory',
  description:
    'A conversation memory service (the memory contract, e.g. the broker) that queries read history from and write to.',
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
