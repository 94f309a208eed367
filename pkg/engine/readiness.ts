/**
 * What a Query waits for before it can run: an object it needs that exists but that its controller
 * has not resolved yet — its Memory without `status.lastResolvedAddress`, an MCPServer its target
 * calls without an address. Objects applied together reach the cache in any order, so this is a
 * wait (the controller keeps the Query pending and looks again), not a failure. One it names that
 * is not in the cache is looked for during NOT_FOUND_GRACE_MS after the Query's creation; past that
 * it does not exist and the run fails it as before (MemoryError, InvalidTarget, TargetNotFound) —
 * also for the target itself and the Agents, Teams, Tools and Models it refers to.
 * Read from the same lookup the run uses, synchronously, so what passes here resolves in the run.
 */
import { DEFAULT_MEMORY_NAME, type Query, type QueryWaitReason } from '../api/index.ts';
import type { Agent } from '../api/kinds/agent.ts';
import type { MCPServer } from '../api/kinds/mcpserver.ts';
import type { ResourceLookup } from './contract.ts';

export interface Unresolved {
  reason: QueryWaitReason;
  kind: 'Memory' | 'MCPServer' | 'Agent' | 'Team' | 'Tool' | 'Model';
  name: string;
  /** For the condition: `waiting for Memory m to be resolved (…its status message)`. */
  message: string;
  /**
   * Set when the object is not in the cache at all and the Query is younger than
   * NOT_FOUND_GRACE_MS: until then (ms since the epoch) it is looked for again; after, the run
   * fails it as missing.
   */
  until?: number;
}

/**
 * How long after its creation a Query looks again for a Memory or MCPServer it names that is not
 * in the cache: objects applied together reach the controller's cache in any order (separate
 * watches). Past it, missing means missing and the run fails it. The Evaluation reconciler's grace
 * for a missing subject is the same.
 */
export const NOT_FOUND_GRACE_MS = 5000;

const waiting = (
  reason: QueryWaitReason,
  kind: 'Memory' | 'MCPServer',
  name: string,
  why?: string,
): Unresolved => ({
  reason,
  kind,
  name,
  message: `waiting for ${kind} ${name} to be resolved${why ? `: ${why}` : ''}`,
});

const notFoundYet = (
  reason: QueryWaitReason,
  kind: Unresolved['kind'],
  name: string,
  namespace: string,
  until: number,
): Unresolved => ({
  reason,
  kind,
  name,
  until,
  message: `waiting for ${kind} ${name}: not found in namespace ${namespace} yet`,
});

/**
 * Resolution failures that no other object appearing can fix: the object is refused as written (a
 * Secret that did not opt in, a Service outside the watched namespace, an address that is not
 * allowed). A Query using it is not held: it runs and fails at once saying why, as a user expects
 * of a configuration error. A missing Service or Secret, or no status yet, is waited for.
 */
const REFUSED = new Set(['SecretNotUsable', 'ServiceNotWatched', 'InvalidAddress']);

const refused = (status: { conditions?: Array<{ status?: string; reason?: string }> } | undefined) =>
  !!status?.conditions?.some((c) => c.status === 'False' && REFUSED.has(c.reason ?? ''));

/**
 * The first object the Query waits for, or undefined when it can run now. A Memory `default` that is
 * not in the cache is not waited for: every Query without one would wait (it runs without memory).
 */
export function unresolvedDependency(
  lookup: ResourceLookup,
  query: Query,
  now = Date.now(),
): Unresolved | undefined {
  const namespace = query.metadata.namespace ?? 'default';
  const named = query.spec?.memory?.name;
  const memoryName = named ?? DEFAULT_MEMORY_NAME;
  const memory = lookup.memory(namespace, memoryName);
  const created = Date.parse(query.metadata.creationTimestamp ?? '');
  const graceUntil = Number.isFinite(created) ? created + NOT_FOUND_GRACE_MS : 0;
  const young = now < graceUntil ? graceUntil : undefined;
  if (!memory && named && young) return notFoundYet('MemoryNotReady', 'Memory', named, namespace, young);
  if (memory && !memory.status?.lastResolvedAddress && !refused(memory.status))
    return waiting('MemoryNotReady', 'Memory', memoryName, memory.status?.message);
  const target = query.spec?.target;
  if (!target) return undefined;
  const walk = new TargetWalk(lookup, namespace, young);
  if (target.type === 'tool') return walk.tool(target.name);
  if (target.type === 'agent') return walk.agent(target.name);
  if (target.type === 'team') return walk.team(target.name);
  if (target.type === 'model') return walk.model(target.name);
  return undefined;
}

/**
 * What a target needs: the Agents, Teams, Tools and Models it refers to — each looked for again
 * while the Query is young when it is not in the cache — and the MCPServers it calls (a Tool of type
 * mcp, an Agent's tools, a Team's members). Each object is visited once, so a Team that contains
 * itself ends the walk (the run refuses it).
 */
class TargetWalk {
  readonly #seen = new Set<string>();
  readonly #lookup: ResourceLookup;
  readonly #namespace: string;
  /** While the Query is young: when a missing MCPServer stops being looked for. */
  readonly #young: number | undefined;

  constructor(lookup: ResourceLookup, namespace: string, young: number | undefined) {
    this.#lookup = lookup;
    this.#namespace = namespace;
    this.#young = young;
  }

  #once(key: string): boolean {
    if (this.#seen.has(key)) return false;
    this.#seen.add(key);
    return true;
  }

  /** A referenced object not in the cache: looked for again while the Query is young. */
  #missing(kind: 'Agent' | 'Team' | 'Tool' | 'Model', name: string): Unresolved | undefined {
    return this.#young ? notFoundYet('TargetNotReady', kind, name, this.#namespace, this.#young) : undefined;
  }

  model(name: string): Unresolved | undefined {
    if (!this.#once(`model/${name}`)) return undefined;
    return this.#lookup.model(this.#namespace, name) ? undefined : this.#missing('Model', name);
  }

  server(name: string): Unresolved | undefined {
    if (!this.#once(`server/${name}`)) return undefined;
    const s: MCPServer | undefined = this.#lookup.mcpServer?.(this.#namespace, name);
    if (!s)
      return this.#young
        ? notFoundYet('MCPServerNotReady', 'MCPServer', name, this.#namespace, this.#young)
        : undefined;
    // The engine calls status.lastResolvedAddress, else a direct spec.address.value (mcp-tool.ts).
    if (s.status?.lastResolvedAddress || s.spec.address?.value || refused(s.status)) return undefined;
    return waiting('MCPServerNotReady', 'MCPServer', name, s.status?.message);
  }

  tool(name: string): Unresolved | undefined {
    if (!this.#once(`tool/${name}`)) return undefined;
    const t = this.#lookup.tool(this.#namespace, name);
    if (!t) return this.#missing('Tool', name);
    return t.spec.type === 'mcp' && t.spec.mcp ? this.server(t.spec.mcp.serverRef.name) : undefined;
  }

  agent(name: string): Unresolved | undefined {
    if (!this.#once(`agent/${name}`)) return undefined;
    const a: Agent | undefined = this.#lookup.agent(this.#namespace, name);
    if (!a) return this.#missing('Agent', name);
    const model = this.model(a.spec.modelRef?.name ?? 'default');
    if (model) return model;
    for (const ref of a.spec.tools ?? []) {
      const found = ref.mcpServerRef
        ? this.server(ref.mcpServerRef.name)
        : ref.name
          ? this.tool(ref.name)
          : undefined;
      if (found) return found;
    }
    return undefined;
  }

  team(name: string): Unresolved | undefined {
    if (!this.#once(`team/${name}`)) return undefined;
    const team = this.#lookup.team(this.#namespace, name);
    if (!team) return this.#missing('Team', name);
    for (const m of team.spec.members ?? []) {
      const found = m.type === 'agent' ? this.agent(m.name) : this.team(m.name);
      if (found) return found;
    }
    return undefined;
  }
}
