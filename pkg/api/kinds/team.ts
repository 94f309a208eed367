import { z } from 'zod';
import { commonStatusSchema, nameSchema } from '../common.ts';
import { ageColumn, type KindDef, type Resource } from '../kind-def.ts';

export const teamMemberSchema = z.object({
  type: z.enum(['agent', 'team']).describe('Kind of the member: agent or (nested) team'),
  name: nameSchema.describe('Name of the Agent or Team in the same namespace'),
});

export const teamSpecSchema = z.object({
  description: z.string().optional().describe('What the team does'),
  members: z
    .array(teamMemberSchema)
    .min(1)
    .describe('Agents and teams that take turns, in order; each at most once')
    // Each member at most once: the API server enforces the keys of a map list itself (no CEL cost).
    .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type', 'name'] }),
  strategy: z
    .enum(['sequential', 'round-robin'])
    .default('sequential')
    .describe(
      'sequential: each member once, each seeing the previous answer; round-robin: members in turn until maxTurns',
    ),
  maxTurns: z.number().int().min(1).max(1000).optional().describe('Turn limit for round-robin'),
});
export const teamStatusSchema = commonStatusSchema;

export type TeamSpec = z.infer<typeof teamSpecSchema>;
export type Team = Resource<TeamSpec, z.infer<typeof teamStatusSchema>>;

export const teamKind: KindDef = {
  kind: 'Team',
  description: 'Agents and teams answering a Query together. Target of a Query as team/<name>.',
  plural: 'teams',
  singular: 'team',
  shortNames: ['tm'],
  spec: teamSpecSchema,
  status: teamStatusSchema,
  printerColumns: [{ name: 'Strategy', type: 'string', jsonPath: '.spec.strategy' }, ageColumn],
};
