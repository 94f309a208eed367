import type { CachedResource } from '../kube/cache.ts';
import { CoreKinds, type KindRef, kindRef, Scheme } from '../kube/kinds.ts';
import { GROUP, VERSION } from './group.ts';
import type { KindDef } from './kind-def.ts';
import type { Agent } from './kinds/agent.ts';
import type { Evaluation } from './kinds/evaluation.ts';
import type { Evaluator } from './kinds/evaluator.ts';
import type { MCPServer } from './kinds/mcpserver.ts';
import type { Memory } from './kinds/memory.ts';
import type { Model } from './kinds/model.ts';
import type { Query } from './kinds/query.ts';
import type { Team } from './kinds/team.ts';
import type { Tool } from './kinds/tool.ts';
import { ALL_KINDS } from './registry.ts';

/** The kind reference of a Berth kind definition. */
export function refOf<T>(def: Pick<KindDef, 'kind' | 'plural'>): KindRef<T> {
  return kindRef<T>({ group: GROUP, version: VERSION, kind: def.kind, plural: def.plural, namespaced: true });
}

const byKind = (kind: string) => {
  const def = ALL_KINDS.find((k) => k.kind === kind);
  if (!def) throw new Error(`no kind ${kind} in the registry`);
  return def;
};

/** Typed references of the Berth kinds: what every client call and cache read is keyed by. */
export const Kinds = {
  Agent: refOf<Agent>(byKind('Agent')),
  Team: refOf<Team>(byKind('Team')),
  Query: refOf<Query>(byKind('Query')),
  Model: refOf<Model>(byKind('Model')),
  Tool: refOf<Tool>(byKind('Tool')),
  Memory: refOf<Memory>(byKind('Memory')),
  Evaluator: refOf<Evaluator>(byKind('Evaluator')),
  Evaluation: refOf<Evaluation>(byKind('Evaluation')),
  MCPServer: refOf<MCPServer>(byKind('MCPServer')),
} as const;

export const BERTH_KINDS: readonly KindRef<unknown>[] = Object.values(Kinds);

/** Core kinds plus the Berth kinds: the scheme every Berth process builds its client with. */
export const berthScheme = (): Scheme => new Scheme([...BERTH_KINDS]);

export const MARKETPLACE_SOURCES_CONFIGMAP = 'marketplace-sources';

/**
 * What every Berth process caches: all Berth kinds, Secrets (model and API keys), Services (Memory
 * service refs) and only the `marketplace-sources` ConfigMaps.
 */
export const SHARED_CACHE: readonly CachedResource[] = [
  ...BERTH_KINDS.map((ref) => ({ ref })),
  { ref: CoreKinds.Secret },
  { ref: CoreKinds.Service },
  { ref: CoreKinds.ConfigMap, fieldSelector: `metadata.name=${MARKETPLACE_SOURCES_CONFIGMAP}` },
];
