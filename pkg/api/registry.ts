import type { KindDef } from './kind-def.ts';
import { agentKind } from './kinds/agent.ts';
import { evaluationKind } from './kinds/evaluation.ts';
import { evaluatorKind } from './kinds/evaluator.ts';
import { mcpServerKind } from './kinds/mcpserver.ts';
import { memoryKind } from './kinds/memory.ts';
import { modelKind } from './kinds/model.ts';
import { queryKind } from './kinds/query.ts';
import { teamKind } from './kinds/team.ts';
import { toolKind } from './kinds/tool.ts';

export const ALL_KINDS: readonly KindDef[] = [
  agentKind,
  teamKind,
  queryKind,
  modelKind,
  toolKind,
  memoryKind,
  evaluatorKind,
  evaluationKind,
  mcpServerKind,
];

export function kindByPlural(plural: string): KindDef | undefined {
  return ALL_KINDS.find((k) => k.plural === plural);
}
