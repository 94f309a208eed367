import { z } from 'zod';
import { commonStatusSchema, nameSchema } from '../common.ts';
import { ageColumn, type KindDef, type Resource } from '../kind-def.ts';

export const teamMemberSchema = z.object({ type: z.enum(['agent', 'team']), name: nameSchema });

export const teamSpecSchema = z.object({
  description: z.string().optional(),
  members: z.array(teamMemberSchema).min(1),
  strategy: z.enum(['sequential', 'round-robin']).default('sequential'),
  maxTurns: z.number().int().min(1).max(1000).optional().describe('Turn limit for round-robin'),
});
export const teamStatusSchema = commonStatusSchema;

export type TeamSpec = z.infer<typeof teamSpecSchema>;
export type Team = Resource<TeamSpec, z.infer<typeof teamStatusSchema>>;

export const teamKind: KindDef = {
  kind: 'Team',
  plural: 'teams',
  singular: 'team',
  shortNames: ['tm'],
  spec: teamSpecSchema,
  status: teamStatusSchema,
  printerColumns: [{ name: 'Strategy', type: 'string', jsonPath: '.spec.strategy' }, ageColumn],
};
